"""Telegram adapter end to end: FakeTelegram ⇄ real PTB 22.8 ⇄ router ⇄ fake model.

Each test starts a real runtime whose only platform is the Telegram adapter built from config
(``build(section, runtime)``), pushes updates into the fake and asserts on what the fake
recorded, always with deadlines.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from adapters.telegram.adapter import TelegramAdapter, build
from core.model.errors import ChannelUnavailable
from core.runtime import Runtime
from core.store import SessionEntry
from tests.adapters.telegram.runtime import OWNER, Start, telegram_config
from tests.conftest import RuntimeFactory
from tests.fakes.model import FakeModelServer
from tests.fakes.model_script import STREAMED_TEXT, held_stream, text
from tests.fakes.telegram import FakeTelegram
from tests.polling import eventually

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")

BOT = "@crosstalk_test_bot"


async def session(rt: Runtime, key: str) -> SessionEntry:
    async def get() -> SessionEntry | None:
        return await rt.store.get_session(key)

    entry: SessionEntry = await eventually(get)
    return entry


async def transcript(rt: Runtime, key: str) -> list[str]:
    entry = await session(rt, key)
    return [m.plain_text() for m in await rt.store.history(entry.session_id)]


async def test_dm_round_trip(start_tg: Start, fake_telegram: FakeTelegram) -> None:
    _, adapter = await start_tg()
    assert adapter.status().state == "connected"
    assert adapter.bot_username == "crosstalk_test_bot"
    fake_telegram.user_message(OWNER, "hello there")
    [call] = await fake_telegram.wait_for("sendMessage")
    assert call.params["chat_id"] == OWNER
    assert call.params["text"] == "echo: hello there"
    assert "message_thread_id" not in call.params


async def test_group_needs_mention(start_tg: Start, fake_telegram: FakeTelegram) -> None:
    rt, _ = await start_tg()
    fake_telegram.user_message(-100123, "just chatting", chat_type="supergroup", title="Team")
    fake_telegram.user_message(-100123, f"{BOT} ping", chat_type="supergroup", title="Team")
    [call] = await fake_telegram.wait_for("sendMessage")
    assert call.params["chat_id"] == -100123
    assert call.params["text"] == f"echo: {BOT} ping"
    key = "agent:main:telegram:group:-100123"
    texts = await transcript(rt, key)
    assert "just chatting" in texts and f"{BOT} ping" in texts
    # a reply to one of the bot's messages also counts as addressing it
    fake_telegram.user_message(
        -100123, "answering you", chat_type="supergroup", title="Team", reply_to_bot=True
    )
    calls = await fake_telegram.wait_for("sendMessage", 2)
    assert calls[1].params["text"] == "echo: answering you"
    assert len(fake_telegram.calls_for("sendMessage")) == 2


async def test_forum_topic_reply_lands_in_topic(
    start_tg: Start, fake_telegram: FakeTelegram
) -> None:
    rt, _ = await start_tg()
    fake_telegram.user_message(
        -100777,
        f"{BOT} in topic",
        chat_type="supergroup",
        thread_id=7,
        is_topic=True,
        title="Forum",
    )
    [call] = await fake_telegram.wait_for("sendMessage")
    assert call.params["chat_id"] == -100777
    assert call.params["message_thread_id"] == 7
    entry = await session(rt, "agent:main:telegram:group:-100777:topic:7")
    assert entry.last_to == "-100777" and entry.last_thread_id == "7"


async def test_own_and_bot_messages_and_channel_posts_ignored(
    start_tg: Start, fake_telegram: FakeTelegram
) -> None:
    rt, _ = await start_tg()
    own = fake_telegram.user_message(OWNER, "from myself", push=False)
    own["message"]["from"] = fake_telegram.bot_user
    fake_telegram.push_update(own)
    other = fake_telegram.user_message(OWNER, "from another bot", push=False)
    other["message"]["from"] = {"id": 555, "is_bot": True, "first_name": "Other"}
    fake_telegram.push_update(other)
    fake_telegram.push_update(
        {
            "channel_post": {
                "message_id": 900,
                "date": 1700000000,
                "text": "news",
                "chat": {"id": -100999, "type": "channel", "title": "News"},
            }
        }
    )
    fake_telegram.user_message(OWNER, "real user")
    [call] = await fake_telegram.wait_for("sendMessage")
    assert call.params["text"] == "echo: real user"
    texts = await transcript(rt, "agent:main:main")
    assert "real user" in texts
    assert not {"from myself", "from another bot", "news"} & set(texts)


async def test_long_reply_split_at_4096(
    start_tg: Start, fake_telegram: FakeTelegram, fake_model: FakeModelServer
) -> None:
    await start_tg()
    long_reply = " ".join(f"word{i:04d}" for i in range(1000))  # 9999 characters
    fake_model.script(text(long_reply))
    fake_telegram.user_message(OWNER, "tell me a lot")

    def chunks() -> list[str]:
        return [c.params["text"] for c in fake_telegram.calls_for("sendMessage")]

    await fake_telegram.wait_until(lambda: " ".join(chunks()).split() == long_reply.split())
    assert len(chunks()) == 3
    assert all(len(c) <= 4096 for c in chunks())


async def test_rate_limit_retried_then_delivered(
    start_tg: Start, fake_telegram: FakeTelegram
) -> None:
    rt, _ = await start_tg()
    fake_telegram.fail_next("sendMessage", 429, retry_after=1)
    fake_telegram.user_message(OWNER, "busy?")
    calls = await fake_telegram.wait_for("sendMessage", 2)
    assert [c.status for c in calls] == [429, 200]
    assert calls[1].params["text"] == "echo: busy?"

    async def delivered() -> Any:
        rows = await rt.store.list_deliveries()
        return [r for r in rows if r.outcome == "delivered"]

    [row] = await eventually(delivered)
    assert row.attempts == 2 and row.channel == "telegram" and row.to == str(OWNER)


async def test_forbidden_recorded_as_failed(start_tg: Start, fake_telegram: FakeTelegram) -> None:
    rt, _ = await start_tg()
    fake_telegram.fail_next("sendMessage", 403)
    fake_telegram.user_message(OWNER, "are you blocked?")
    await fake_telegram.wait_for("sendMessage")

    async def failed() -> Any:
        return [r for r in await rt.store.list_deliveries() if r.outcome == "failed"]

    [row] = await eventually(failed)
    assert "TargetForbidden" in (row.reason or "")
    assert row.channel == "telegram" and row.to == str(OWNER)
    assert len(fake_telegram.calls_for("sendMessage")) == 1  # 403 is not retried


async def test_send_off_by_owner_silences_but_stores(
    start_tg: Start, fake_telegram: FakeTelegram
) -> None:
    rt, _ = await start_tg()
    fake_telegram.user_message(OWNER, "/send off")
    [call] = await fake_telegram.wait_for("sendMessage")
    assert call.params["text"] == "⚙️ Send policy set to off."
    fake_telegram.user_message(OWNER, "anyone there?")
    # updates are handled in order, so once this command is answered the message before it
    # has been fully routed
    fake_telegram.user_message(OWNER, "/send on")
    calls = await fake_telegram.wait_for("sendMessage", 2)
    assert calls[1].params["text"] == "⚙️ Send policy set to on."
    assert len(fake_telegram.calls_for("sendMessage")) == 2
    assert "anyone there?" in await transcript(rt, "agent:main:main")


async def test_send_off_by_non_owner_refused(start_tg: Start, fake_telegram: FakeTelegram) -> None:
    await start_tg(dmPolicy="open")  # admit mallory (D11), who is not an owner
    fake_telegram.user_message(7, "/send off", username="mallory")
    [call] = await fake_telegram.wait_for("sendMessage")
    assert call.params["chat_id"] == 7
    assert call.params["text"] == "⚙️ /send is owner-only."


async def test_group_command_with_bot_suffix(start_tg: Start, fake_telegram: FakeTelegram) -> None:
    await start_tg()
    fake_telegram.user_message(
        -100123, "/send@crosstalk_test_bot off", chat_type="supergroup", user_id=OWNER
    )
    [call] = await fake_telegram.wait_for("sendMessage")
    assert call.params["chat_id"] == -100123
    assert call.params["text"] == "⚙️ Send policy set to off."


async def test_sessions_list_shows_telegram_sessions(
    start_tg: Start, fake_telegram: FakeTelegram
) -> None:
    rt, _ = await start_tg()
    fake_telegram.user_message(OWNER, "hi", username="alice")
    fake_telegram.user_message(-100123, f"{BOT} hi all", chat_type="supergroup", title="Team")
    await fake_telegram.wait_for("sendMessage", 2)
    main = await session(rt, "agent:main:main")
    result = await rt.tools.invoke(rt.tool_env, "sessions_list", {}, rt.services.context_for(main))
    rows = {row["key"]: row for row in result["sessions"]}
    group = rows["agent:main:telegram:group:-100123"]
    assert group["kind"] == "group"
    assert group["channel"] == "telegram"
    assert group["displayName"] == "Team"
    assert group["deliveryContext"] == {
        "channel": "telegram",
        "to": "-100123",
        "accountId": "default",
    }
    dm = next(row for key, row in rows.items() if key in ("main", "agent:main:main"))
    assert dm["kind"] == "main"
    assert dm["displayName"] == "Alice"
    assert dm["deliveryContext"] == {
        "channel": "telegram",
        "to": str(OWNER),
        "accountId": "default",
    }


async def test_bad_token_is_a_clear_error(
    fake_telegram: FakeTelegram, make_runtime: RuntimeFactory
) -> None:
    rt = await make_runtime(
        {"channels": {"telegram": {"botToken": "999:WRONG", "apiBaseUrl": fake_telegram.base_url}}}
    )
    section = rt.config.channels.telegram
    assert section is not None
    [adapter] = build(section, rt)
    with pytest.raises(ChannelUnavailable, match="telegram account default") as info:
        await rt.add_adapter(adapter)
    assert "WRONG" not in str(info.value)  # the token never ends up in errors or logs
    assert adapter.status().state == "failed"
    await adapter.stop()


@pytest.mark.parametrize("status", [500, 502, 503])
async def test_a_server_error_on_a_send_is_retried_then_delivered(
    start_tg: Start, fake_telegram: FakeTelegram, status: int
) -> None:
    """D142: one 5xx no longer loses the reply."""
    rt, _ = await start_tg()
    rt.gate.retry.backoff = 0.01
    fake_telegram.fail_next("sendMessage", status)
    fake_telegram.user_message(OWNER, "still there?")
    calls = await fake_telegram.wait_for("sendMessage", 2)
    assert [c.status for c in calls] == [status, 200]
    assert calls[1].params["text"] == "echo: still there?"

    async def delivered() -> Any:
        return [r for r in await rt.store.list_deliveries() if r.outcome == "delivered"]

    [row] = await eventually(delivered)
    assert row.attempts == 2


async def test_server_errors_that_stay_end_failed_in_the_delivery_log(
    start_tg: Start, fake_telegram: FakeTelegram
) -> None:
    rt, _ = await start_tg()
    rt.gate.retry.backoff = 0.01
    for _ in range(4):
        fake_telegram.fail_next("sendMessage", 503)
    fake_telegram.user_message(OWNER, "anyone?")
    await fake_telegram.wait_for("sendMessage", 4)

    async def failed() -> Any:
        return [r for r in await rt.store.list_deliveries() if r.outcome == "failed"]

    [row] = await eventually(failed)
    assert row.attempts == 4 and "(after 4 attempts)" in (row.reason or "")


async def test_a_send_telegram_never_answers_times_out_and_is_retried(
    make_runtime: RuntimeFactory, fake_telegram: FakeTelegram
) -> None:
    """D142/D144: the adapter's request timeout ends an unanswered send as a fault the gate
    retries; the stalled call took no effect, so the chat shows the reply once."""
    rt = await make_runtime(telegram_config(fake_telegram))
    assert rt.config.channels.telegram is not None
    [account] = [a for _, a in rt.config.channels.telegram.iter_accounts()]
    adapter = TelegramAdapter(account, request_timeout=1.0, poll_timeout=1, retry_initial=0.05)
    await rt.add_adapter(adapter)
    try:
        rt.gate.retry.backoff = 0.01
        fake_telegram.stall_next("sendMessage")
        fake_telegram.user_message(OWNER, "still there?")
        calls = await fake_telegram.wait_for("sendMessage", 2, timeout=30)
        assert fake_telegram.stalled == ["sendMessage"]
        assert calls[1].params["text"] == "echo: still there?"

        async def delivered() -> Any:
            return [r for r in await rt.store.list_deliveries() if r.outcome == "delivered"]

        [row] = await eventually(delivered, 30)
        assert row.attempts == 2
        assert [m["text"] for m in fake_telegram.visible()] == ["echo: still there?"]
    finally:
        await adapter.stop()


async def test_a_429_on_the_preview_holds_the_chat_for_the_final_reply(
    start_tg: Start, fake_telegram: FakeTelegram, fake_model: FakeModelServer
) -> None:
    """The issue's `retry_after` answered 9 ms later (D142): the streamed preview's first
    message meets Telegram's 429, so no preview or typing goes to that chat while the hold
    lasts and the final reply waits out the seconds Telegram asked, then is sent once."""
    rt, _ = await start_tg(streaming="edit")
    now, slept = [100.0], []

    async def sleep(seconds: float) -> None:  # the retry step's waits, recorded, not slept
        slept.append(round(seconds, 3))
        now[0] += seconds

    rt.gate.retry.clock = lambda: now[0]
    rt.gate.retry.sleep = sleep
    fake_model.script(held_stream())
    fake_telegram.fail_next("sendMessage", 429, retry_after=3)
    fake_telegram.user_message(OWNER, "stream please")
    await asyncio.wait_for(fake_model.paused.wait(), 30)

    async def held() -> float:
        return rt.gate.retry.held(f"telegram|default|{OWNER}")

    assert await eventually(held, 30) == 3.0  # the preview met the 429: the chat is held
    typing = len(fake_telegram.calls_for("sendChatAction"))
    fake_model.resume()

    async def delivered() -> Any:
        return [r for r in await rt.store.list_deliveries() if r.outcome == "delivered"]

    [row] = await eventually(delivered, 30)
    assert slept == [3.0]  # the final reply waited what Telegram asked, once
    assert [c.status for c in fake_telegram.calls_for("sendMessage")] == [429, 200]
    assert [m["text"] for m in fake_telegram.visible()] == [STREAMED_TEXT]
    assert len(fake_telegram.calls_for("sendChatAction")) == typing  # none while held
    assert row.attempts == 1
