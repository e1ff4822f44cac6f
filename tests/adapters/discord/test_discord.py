"""Discord adapter end to end: FakeDiscord → real discord.py → router → fake model → REST."""

from __future__ import annotations

import asyncio
from typing import Any

from core.model.records import SessionQuery
from core.runtime import Runtime
from tests.adapters.discord.runtime import OWNER, DiscordRuntime
from tests.fakes.discord import FakeDiscord
from tests.fakes.model import FakeModelServer, text
from tests.fakes.model_script import STREAMED_TEXT, held_stream
from tests.fakes.retry_clock import FakeHold
from tests.polling import eventually, user_texts

USER = 800000000002


async def keys_with(rt: Runtime, part: object) -> list[str]:
    return [e.key for e in await rt.store.list_sessions(SessionQuery()) if str(part) in e.key]


async def test_dm_round_trip(fake_discord: FakeDiscord, discord_rt: DiscordRuntime) -> None:
    rt, adapter = await discord_rt()
    bot = fake_discord.bot_id
    assert adapter.mention_patterns == (f"<@{bot}>", f"<@!{bot}>")
    assert adapter.bot_username == fake_discord.bot_name
    identify = fake_discord.calls_for("IDENTIFY")[0]
    assert identify.params["intents"] & (1 << 15), "message content intent must be requested"
    await fake_discord.user_message(fake_discord.DM_CHANNEL_ID, "hello there")
    [post] = await fake_discord.wait_for("createMessage", timeout=60)
    assert post.params["channel_id"] == str(fake_discord.DM_CHANNEL_ID)
    assert post.params["content"] == "echo: hello there"
    assert post.token == fake_discord.token
    [key] = await keys_with(rt, OWNER)
    entry = await rt.store.get_session(key)
    assert entry is not None and entry.chat_type == "direct" and entry.display_name == "Alice"
    assert entry.last_channel == "discord"
    assert entry.last_to == f"channel:{fake_discord.DM_CHANNEL_ID}"
    assert entry.last_thread_id is None


async def test_group_needs_mention(fake_discord: FakeDiscord, discord_rt: DiscordRuntime) -> None:
    rt, _ = await discord_rt()
    chan = fake_discord.CHANNEL_ID
    await fake_discord.user_message(chan, "just chatting")
    keys: list[str] = []

    async def stored() -> bool:
        keys[:] = await keys_with(rt, chan)
        return bool(keys) and await user_texts(rt, keys[0]) == ["just chatting"]

    await eventually(stored)
    assert not fake_discord.calls_for("createMessage")
    await fake_discord.user_message(chan, "what's up", mentions_bot=True)
    [post] = await fake_discord.wait_for("createMessage", timeout=60)
    said = f"<@{fake_discord.bot_id}> what's up"
    assert post.params["channel_id"] == str(chan) and post.params["content"] == f"echo: {said}"
    # a reply to one of the bot's messages counts as addressing it
    bot_msg = fake_discord.message_payload(
        chan, "earlier", guild_id=fake_discord.GUILD_ID, author=fake_discord.bot_user
    )
    reply = fake_discord.message_payload(
        chan,
        "answering you",
        guild_id=fake_discord.GUILD_ID,
        author={**fake_discord.bot_user, "id": str(USER), "username": "bob", "bot": False},
        reference={
            "message_id": bot_msg["id"],
            "channel_id": str(chan),
            "guild_id": str(fake_discord.GUILD_ID),
        },
    )
    reply["referenced_message"] = bot_msg
    await fake_discord.dispatch("MESSAGE_CREATE", reply)
    posts = await fake_discord.wait_for("createMessage", 2)
    assert posts[1].params["content"] == "echo: answering you"
    assert await user_texts(rt, keys[0]) == ["just chatting", said, "answering you"]
    entry = await rt.store.get_session(keys[0])
    assert entry is not None and entry.chat_type == "channel"
    assert entry.last_to == f"channel:{chan}" and entry.display_name == "Test Guild #general"


async def test_thread_reply_lands_in_thread(
    fake_discord: FakeDiscord, discord_rt: DiscordRuntime
) -> None:
    rt, _ = await discord_rt()
    thread, parent = fake_discord.THREAD_ID, fake_discord.CHANNEL_ID
    await fake_discord.user_message(thread, "in thread", mentions_bot=True)
    [post] = await fake_discord.wait_for("createMessage", timeout=60)
    assert post.params["channel_id"] == str(thread)
    [key] = await keys_with(rt, thread)
    assert str(parent) in key
    entry = await rt.store.get_session(key)
    assert entry is not None
    assert (entry.last_to, entry.last_thread_id) == (f"channel:{parent}", str(thread))
    # a thread created after the client connected (THREAD_CREATE first)
    await fake_discord.user_message(1000000099, "new thread", thread=True, mentions_bot=True)
    posts = await fake_discord.wait_for("createMessage", 2)
    assert posts[1].params["channel_id"] == "1000000099"


async def test_own_and_bot_messages_ignored(
    fake_discord: FakeDiscord, discord_rt: DiscordRuntime
) -> None:
    rt, _ = await discord_rt()
    dm = fake_discord.DM_CHANNEL_ID
    await fake_discord.user_message(
        dm, "beep", author_id=700000000001, username="otherbot", bot_author=True
    )
    await fake_discord.user_message(dm, "real one")
    [post] = await fake_discord.wait_for("createMessage", timeout=60)
    assert post.params["content"] == "echo: real one"
    # the fake echoed our reply back as MESSAGE_CREATE; one more round trip proves it was dropped
    await fake_discord.user_message(dm, "again")
    await fake_discord.wait_for("createMessage", 2)
    [key] = await keys_with(rt, OWNER)
    assert await user_texts(rt, key) == ["real one", "again"]
    assert not await keys_with(rt, 700000000001)
    assert len(fake_discord.calls_for("createMessage")) == 2


async def test_long_reply_split(
    fake_discord: FakeDiscord, fake_model: FakeModelServer, discord_rt: DiscordRuntime
) -> None:
    await discord_rt()
    long = "\n".join(f"line {i} " + "x" * 90 for i in range(50))  # ~5 000 chars
    fake_model.script(text(long))
    await fake_discord.user_message(fake_discord.DM_CHANNEL_ID, "long please")
    posts = await fake_discord.wait_for("createMessage", 3)
    assert all(len(p.params["content"]) <= 2000 for p in posts)
    joined = "".join(p.params["content"] for p in posts)
    assert joined.replace("\n", "") == long.replace("\n", "")


async def test_rate_limit_retried_and_forbidden_recorded(
    fake_discord: FakeDiscord, discord_rt: DiscordRuntime
) -> None:
    rt, _ = await discord_rt()
    dm = fake_discord.DM_CHANNEL_ID
    # discord.py itself waits out a short 429 five times, then raises; the gate retries that
    fake_discord.fail_next("createMessage", 429, retry_after=0.01, times=5)
    await fake_discord.user_message(dm, "one")
    posts = await fake_discord.wait_for("createMessage", 6)
    assert [p.status for p in posts] == [429] * 5 + [200]
    assert posts[5].params["content"] == "echo: one"

    async def delivered() -> bool:
        return bool(await rt.store.list_deliveries(outcome="delivered"))

    await eventually(delivered)
    [ok] = await rt.store.list_deliveries(outcome="delivered")
    assert ok.attempts == 2 and ok.to == f"channel:{dm}"
    fake_discord.fail_next("createMessage", 403, times=5)
    await fake_discord.user_message(dm, "two")
    await fake_discord.wait_for("createMessage", 7)

    async def failed() -> bool:
        return bool(await rt.store.list_deliveries(outcome="failed"))

    await eventually(failed)
    [bad] = await rt.store.list_deliveries(outcome="failed")
    assert "TargetForbidden" in (bad.reason or "") and bad.to == f"channel:{dm}"
    assert len(fake_discord.calls_for("createMessage")) == 7  # 403 is not retried


async def test_send_off_owner_and_non_owner(
    fake_discord: FakeDiscord, discord_rt: DiscordRuntime
) -> None:
    rt, _ = await discord_rt({"channels": {"discord": {"dmPolicy": "open"}}})  # admit `bob`
    owner_dm, user_dm = fake_discord.DM_CHANNEL_ID, fake_discord.DM_CHANNEL_ID + 1
    await fake_discord.user_message(owner_dm, "/send off")
    [post] = await fake_discord.wait_for("createMessage", timeout=60)
    assert post.params["content"] == "⚙️ Send policy set to off."
    await fake_discord.user_message(owner_dm, "silent now")
    await fake_discord.user_message(user_dm, "/send off", author_id=USER, username="bob")
    posts = await fake_discord.wait_for("createMessage", 2)
    assert posts[1].params["channel_id"] == str(user_dm)
    assert posts[1].params["content"] == "⚙️ /send is owner-only."
    [key] = await keys_with(rt, OWNER)

    async def stored() -> bool:  # the owner's DM and bob's command race on the gateway
        return "silent now" in await user_texts(rt, key)

    await eventually(stored)
    entry = await rt.store.get_session(key)
    assert entry is not None
    [silent] = [
        m for m in await rt.store.history(entry.session_id) if m.plain_text() == "silent now"
    ]
    assert "send policy" in str((silent.meta or {}).get("noRun"))
    assert len(fake_discord.calls_for("createMessage")) == 2


async def test_sessions_list_shows_discord_sessions(
    fake_discord: FakeDiscord, discord_rt: DiscordRuntime
) -> None:
    rt, _ = await discord_rt()
    thread, parent = fake_discord.THREAD_ID, fake_discord.CHANNEL_ID
    await fake_discord.user_message(thread, "hi", mentions_bot=True)
    await fake_discord.wait_for("createMessage")
    await fake_discord.user_message(fake_discord.DM_CHANNEL_ID, "hi dm")
    await fake_discord.wait_for("createMessage", 2)
    [group_key] = await keys_with(rt, thread)
    group = await rt.store.get_session(group_key)
    assert group is not None
    result = await rt.tools.invoke(rt.tool_env, "sessions_list", {}, rt.services.context_for(group))
    rows = result["sessions"] if isinstance(result, dict) else result
    by_key = {r["key"]: r for r in rows}
    row = by_key[group.key]
    assert row["kind"] == "group" and row["channel"] == "discord"
    assert row["displayName"] == "Test Guild #general › a-thread"
    # rows carry {channel, to, accountId} only; the thread lives on the entry
    assert row["deliveryContext"] == {
        "channel": "discord",
        "to": f"channel:{parent}",
        "accountId": "default",
    }
    assert group.last_thread_id == str(thread)
    [dm] = [r for r in rows if str(OWNER) in r["key"]]
    assert dm["displayName"] == "Alice"
    assert dm["deliveryContext"]["to"] == f"channel:{fake_discord.DM_CHANNEL_ID}"


async def test_a_send_discord_never_answers_is_retried_once_bounded(
    fake_discord: FakeDiscord, discord_rt: DiscordRuntime
) -> None:
    """D142: discord.py's session waits five minutes for an answer; the adapter's
    `send_timeout` makes an unanswered send a fault the gate retries (its nonce keeps a late
    first attempt from doubling it)."""
    rt, adapter = await discord_rt()
    adapter.send_timeout = 0.5
    rt.gate.retry.backoff = 0.01
    fake_discord.stall_next("createMessage")
    dm = fake_discord.DM_CHANNEL_ID
    await fake_discord.user_message(dm, "are you there?")
    posts = await fake_discord.wait_for("createMessage", 2, timeout=30)
    assert fake_discord.stalled == ["createMessage"]
    assert posts[1].params["content"] == "echo: are you there?"

    async def delivered() -> bool:
        return bool(await rt.store.list_deliveries(outcome="delivered"))

    await eventually(delivered, 30)
    [row] = await rt.store.list_deliveries(outcome="delivered")
    assert row.attempts == 2 and row.to == f"channel:{dm}"
    assert [m["content"] for m in fake_discord.visible()] == ["echo: are you there?"]


async def test_a_429_on_the_preview_holds_the_chat_for_the_final_reply(
    fake_discord: FakeDiscord, discord_rt: DiscordRuntime, fake_model: FakeModelServer
) -> None:
    """D142 on Discord: the streamed preview's first message meets a 429 longer than discord.py
    waits out itself (30 s), so the chat is held for what Discord asked, within the gate's bound
    of 30 s; no preview goes there meanwhile and the final reply waits it out once, then is
    sent once."""
    rt, _ = await discord_rt({"channels": {"discord": {"streaming": "edit"}}})
    hold = FakeHold(rt)
    fake_model.script(held_stream())
    dm = fake_discord.DM_CHANNEL_ID
    fake_discord.fail_next("createMessage", 429, retry_after=60)
    await fake_discord.user_message(dm, "stream please")
    await asyncio.wait_for(fake_model.paused.wait(), 30)
    assert await hold.until_held(f"discord|default|channel:{dm}") == 30.0
    fake_model.resume()

    async def delivered() -> Any:
        return [r for r in await rt.store.list_deliveries() if r.outcome == "delivered"]

    [row] = await eventually(delivered, 30)
    assert hold.slept == [30.0]  # the final reply waited, once
    assert [c.status for c in fake_discord.calls_for("createMessage")] == [429, 200]
    assert [m["content"] for m in fake_discord.visible()] == [STREAMED_TEXT]
    assert row.attempts == 1
