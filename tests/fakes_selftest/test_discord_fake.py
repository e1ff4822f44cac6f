"""FakeDiscord driven by the real discord.py 2.7.1 (gateway login, on_message, REST errors)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import aiohttp
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


async def test_commands_and_slash_interactions(fake_discord: FakeDiscord) -> None:
    """Bulk overwrite as discord.py sends it, the menu per place and member, a slash command
    dispatched and answered once (its token is the credential), one the menu hides refused."""
    got: asyncio.Queue[discord.Interaction] = asyncio.Queue()
    async with _connected(fake_discord) as (client, _seen):

        @client.event
        async def on_interaction(interaction: discord.Interaction) -> None:
            await got.put(interaction)

        assert client.application_id == fake_discord.application_id
        option = {"type": 3, "name": "args", "description": "the rest", "required": False}
        stored = await client.http.bulk_upsert_global_commands(
            fake_discord.application_id,
            [
                {"name": "help", "type": 1, "description": "Help", "contexts": [0, 1]},
                {
                    "name": "approve",
                    "type": 1,
                    "description": "Approve",
                    "options": [option],
                    "contexts": [0],
                    "default_member_permissions": "0",
                },
            ],
        )
        assert [c["name"] for c in stored] == ["help", "approve"] and stored[0]["id"]
        dm, room = fake_discord.DM_CHANNEL_ID, fake_discord.CHANNEL_ID
        assert fake_discord.menu_for(dm) == ["help"]
        assert fake_discord.menu_for(room) == ["help"]
        assert fake_discord.menu_for(room, admin=True) == ["help", "approve"]
        with pytest.raises(LookupError):
            await fake_discord.slash(room, "approve", "X", user_id=5)

        sent = await fake_discord.slash(room, "approve", "ABCD2345", user_id=5, admin=True)
        interaction = await asyncio.wait_for(got.get(), 5)
        assert interaction.type == discord.InteractionType.application_command
        assert interaction.data is not None and interaction.data.get("name") == "approve"
        assert interaction.data.get("options") == [{"name": "args", "type": 3, "value": "ABCD2345"}]
        assert interaction.guild_id == fake_discord.GUILD_ID
        await interaction.response.send_message("/approve ABCD2345", ephemeral=True)
        [ack] = fake_discord.callbacks
        assert ack["type"] == 4 and ack["data"]["content"] == "/approve ABCD2345"
        assert ack["data"]["flags"] == 64
        await fake_discord.redeliver_interaction(sent)  # a replay: answered once already
        again = await asyncio.wait_for(got.get(), 5)
        with pytest.raises(discord.HTTPException) as refused:
            await again.response.defer()
        assert refused.value.status == 400 and refused.value.code == 40060
    async with aiohttp.ClientSession() as http:
        url = f"{fake_discord.api_base}/interactions/{sent['id']}/wrong/callback"
        async with http.post(url, json={"type": 6}) as resp:
            assert resp.status == 401
