"""FakeDiscord driven by the real discord.py 2.7.1 (gateway login, on_message, REST errors)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import discord
import pytest

from tests.fakes.discord import FakeDiscord


@asynccontextmanager
async def _connected(
    fake: FakeDiscord, *, message_content: bool = True
) -> AsyncIterator[tuple[discord.Client, list[discord.Message]]]:
    intents = discord.Intents.default()
    intents.message_content = message_content
    client = discord.Client(intents=intents, guild_ready_timeout=0.05, heartbeat_timeout=10)
    seen: list[discord.Message] = []

    @client.event
    async def on_message(message: discord.Message) -> None:
        if message.author == client.user:
            return
        seen.append(message)
        await message.channel.send(f"echo: {message.content}")

    await client.login(fake.token)
    task = asyncio.create_task(client.connect(reconnect=False))
    try:
        await asyncio.wait_for(client.wait_until_ready(), 5)
        yield client, seen
    finally:  # client first, then (fixture) the fake
        await client.close()
        await asyncio.wait_for(task, 5)


async def test_gateway_round_trip(fake_discord: FakeDiscord) -> None:
    async with _connected(fake_discord) as (client, seen):
        assert client.user is not None and client.user.id == fake_discord.bot_id
        guild = client.get_guild(fake_discord.GUILD_ID)
        assert guild is not None and guild.get_channel(fake_discord.CHANNEL_ID) is not None
        assert guild.get_thread(fake_discord.THREAD_ID) is not None
        connect = fake_discord.calls_for("CONNECT")[0]
        assert connect.params["compress"] == "zlib-stream"

        await fake_discord.user_message(fake_discord.CHANNEL_ID, "hi")
        [call] = await fake_discord.wait_for("createMessage")
        assert call.params["channel_id"] == str(fake_discord.CHANNEL_ID)
        assert call.params["content"] == "echo: hi"
        assert call.token == fake_discord.token

        await fake_discord.user_message(fake_discord.THREAD_ID, "in thread", thread=True)
        await fake_discord.user_message(fake_discord.DM_CHANNEL_ID, "dm")
        calls = await fake_discord.wait_for("createMessage", 3)
        assert {c.params["channel_id"]: c.params["content"] for c in calls[1:]} == {
            str(fake_discord.THREAD_ID): "echo: in thread",
            str(fake_discord.DM_CHANNEL_ID): "echo: dm",
        }
        assert isinstance(seen[2].channel, discord.DMChannel)


async def test_message_content_intent_is_enforced(fake_discord: FakeDiscord) -> None:
    async with _connected(fake_discord, message_content=False) as (_client, seen):
        await fake_discord.user_message(fake_discord.CHANNEL_ID, "secret")
        await fake_discord.user_message(fake_discord.CHANNEL_ID, "hey", mentions_bot=True)
        await fake_discord.wait_for("createMessage", 2)
        assert seen[0].content == ""
        assert seen[1].content == f"<@{fake_discord.bot_id}> hey"


async def test_rest_errors_surface(fake_discord: FakeDiscord) -> None:
    client = discord.Client(intents=discord.Intents.default(), max_ratelimit_timeout=30)
    await client.login(fake_discord.token)
    try:
        channel = client.get_partial_messageable(fake_discord.CHANNEL_ID)
        fake_discord.fail_next("createMessage", 429, retry_after=60)
        with pytest.raises(discord.RateLimited):
            await channel.send("x")
        fake_discord.fail_next("createMessage", 429, retry_after=0.01)
        msg = await asyncio.wait_for(channel.send("retried"), 5)  # short limit: waits, retries
        assert msg.content == "retried"
        fake_discord.fail_next("createMessage", 403)
        with pytest.raises(discord.Forbidden):
            await channel.send("x")
    finally:
        await client.close()
    assert [c.status for c in fake_discord.calls_for("createMessage")] == [429, 429, 200, 403]


async def test_bad_token(fake_discord: FakeDiscord) -> None:
    client = discord.Client(intents=discord.Intents.default())
    try:
        with pytest.raises(discord.LoginFailure):
            await client.login("wrong")
    finally:
        await client.close()
    # A token rejected by the gateway (IDENTIFY) closes with 4004; no reconnect.
    client = discord.Client(intents=discord.Intents.default())
    try:
        await client.login(fake_discord.token)
        fake_discord.token = "revoked"
        with pytest.raises(discord.ConnectionClosed) as info:
            await asyncio.wait_for(client.connect(reconnect=False), 5)
        assert info.value.code == 4004
    finally:
        await client.close()
