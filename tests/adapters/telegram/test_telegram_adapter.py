"""Telegram adapter on its own: normalisation, error mapping, connection states, webhook mode.

The adapter runs against FakeTelegram with a recording sink instead of the router, so these
tests pin down the adapter's half of the contract (InboundMessage fields, typed errors).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from telegram import Update

from adapters.telegram.adapter import TelegramAdapter
from adapters.telegram.normalize import normalize_message
from adapters.telegram.spec import TelegramAccountConfig
from core.model.delivery_context import DeliveryContext
from core.model.errors import (
    ChannelUnavailable,
    RateLimited,
    TargetForbidden,
    TargetNotFound,
)
from core.model.inbound import InboundMessage
from tests.adapters.inbox import Inbox
from tests.fakes.telegram import FakeTelegram
from tests.polling import eventually

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")

BOT_ID = 123456789
BOT = "crosstalk_test_bot"
MakeAdapter = Callable[..., TelegramAdapter]


@pytest.fixture
async def make_adapter(fake_telegram: FakeTelegram) -> AsyncIterator[MakeAdapter]:
    made: list[TelegramAdapter] = []

    def make(account_id: str = "default", **fields: Any) -> TelegramAdapter:
        raw = {"botToken": fake_telegram.token, "apiBaseUrl": fake_telegram.base_url, **fields}
        adapter = TelegramAdapter(
            TelegramAccountConfig.model_validate(raw),
            account_id,
            poll_timeout=1,
            retry_initial=0.05,
            retry_max=0.2,
        )
        made.append(adapter)
        return adapter

    yield make
    for adapter in made:  # client first, then the fake fixture
        await adapter.stop()


def normalize(update: dict[str, Any]) -> InboundMessage | None:
    parsed = Update.de_json(update, None)
    assert parsed is not None and parsed.message is not None
    return normalize_message(parsed.message, account_id="default", bot_id=BOT_ID, bot_username=BOT)


# ---- normalisation (pure) -------------------------------------------------------------------


def test_normalize_direct(fake_telegram: FakeTelegram) -> None:
    msg = normalize(fake_telegram.user_message(42, "hi", username="alice", push=False))
    assert msg is not None
    assert (msg.channel, msg.chat_type, msg.chat_id, msg.sender_id) == (
        "telegram",
        "direct",
        "42",
        "42",
    )
    assert msg.sender_name == "Alice" and msg.chat_title is None
    assert msg.thread_id is None and not msg.topic and not msg.mentioned
    assert msg.message_id is not None and msg.timestamp_ms and msg.timestamp_ms > 10**12
    assert msg.reply_to == DeliveryContext(channel="telegram", to="42", account_id="default")


def test_normalize_group_topic_and_mention(fake_telegram: FakeTelegram) -> None:
    msg = normalize(
        fake_telegram.user_message(
            -100123,
            f"hey @{BOT.upper()} look",
            chat_type="supergroup",
            thread_id=9,
            is_topic=True,
            title="Forum",
            user_id=5,
        )
    )
    assert msg is not None
    assert (msg.chat_type, msg.chat_id, msg.thread_id, msg.topic) == ("group", "-100123", "9", True)
    assert msg.mentioned and not msg.reply_to_bot
    assert msg.chat_title == "Forum" and msg.sender_id == "5"
    assert msg.reply_to.to == "-100123" and msg.reply_to.thread_id == "9"


def test_normalize_reply_thread_is_not_a_topic(fake_telegram: FakeTelegram) -> None:
    # a reply chain in a plain supergroup carries message_thread_id without is_topic_message
    msg = normalize(
        fake_telegram.user_message(
            -100123, "re", chat_type="supergroup", thread_id=55, reply_to_bot=True, push=False
        )
    )
    assert msg is not None
    assert msg.thread_id is None and not msg.topic and msg.reply_to.thread_id is None
    assert msg.reply_to_bot and not msg.mentioned


def test_normalize_ignores_other_mentions_and_bots(fake_telegram: FakeTelegram) -> None:
    msg = normalize(
        fake_telegram.user_message(-1, "hi @someone_else", chat_type="group", push=False)
    )
    assert msg is not None and not msg.mentioned
    update = fake_telegram.user_message(42, "beep", push=False)
    update["message"]["from"] = {"id": 77, "is_bot": True, "first_name": "Bot"}
    assert normalize(update) is None
    topic_starter = fake_telegram.user_message(
        -100123, "in topic", chat_type="supergroup", thread_id=3, is_topic=True, push=False
    )
    topic_starter["message"]["reply_to_message"] = {
        "message_id": 3,
        "date": 1700000000,
        "chat": topic_starter["message"]["chat"],
        "from": fake_telegram.bot_user,
        "forum_topic_created": {"name": "t", "icon_color": 1},
    }
    msg = normalize(topic_starter)
    assert msg is not None and not msg.reply_to_bot


# ---- adapter against the fake ---------------------------------------------------------------


async def test_start_status_and_inbound(
    make_adapter: MakeAdapter, fake_telegram: FakeTelegram
) -> None:
    adapter = make_adapter("work")
    inbox = Inbox()
    await adapter.start(inbox)
    status = adapter.status()
    assert (status.state, status.account_id, status.extra["botUsername"]) == (
        "connected",
        "work",
        BOT,
    )
    assert adapter.mention_patterns == (f"@{BOT}",)
    fake_telegram.user_message(42, "hello")
    msg = await inbox.next()
    assert msg.account_id == "work" and msg.reply_to.account_id == "work"
    receipt = await adapter.send_text(msg.reply_to, "hi back")
    [call] = await fake_telegram.wait_for("sendMessage")
    assert call.params == {"chat_id": 42, "text": "hi back"}
    assert receipt.message_id is not None
    await adapter.stop()
    await adapter.stop()  # safe twice
    assert adapter.status().state == "stopped"
    with pytest.raises(ChannelUnavailable):
        await adapter.send_text(msg.reply_to, "too late")


async def test_send_text_maps_errors(
    make_adapter: MakeAdapter, fake_telegram: FakeTelegram
) -> None:
    adapter = make_adapter()
    await adapter.start(Inbox())
    target = DeliveryContext(channel="telegram", to="-100123", thread_id="4")
    fake_telegram.fail_next("sendMessage", 429, retry_after=7)
    with pytest.raises(RateLimited) as limited:
        await adapter.send_text(target, "x")
    assert limited.value.retry_after == 7
    fake_telegram.fail_next("sendMessage", 403)
    with pytest.raises(TargetForbidden):
        await adapter.send_text(target, "x")
    fake_telegram.fail_next("sendMessage", 400)  # "Bad Request: chat not found"
    with pytest.raises(TargetNotFound):
        await adapter.send_text(target, "x")
    fake_telegram.fail_next("sendMessage", 502)
    with pytest.raises(ChannelUnavailable):
        await adapter.send_text(target, "x")
    await adapter.send_text(target, "finally")
    last = fake_telegram.calls_for("sendMessage")[-1]
    assert last.params == {"chat_id": -100123, "text": "finally", "message_thread_id": 4}
    # targets resolved from session keys may keep a kind prefix
    await adapter.send_text(DeliveryContext(channel="telegram", to="group:-100123"), "prefixed")
    assert fake_telegram.calls_for("sendMessage")[-1].params["chat_id"] == -100123


async def test_missing_token_is_a_clear_error(fake_telegram: FakeTelegram) -> None:
    adapter = TelegramAdapter(TelegramAccountConfig(api_base_url=fake_telegram.base_url), "ops")
    with pytest.raises(ChannelUnavailable, match="telegram account ops: no botToken"):
        await adapter.start(Inbox())
    assert adapter.status().state == "failed"


async def test_connect_failure_retries_in_background(
    make_adapter: MakeAdapter, fake_telegram: FakeTelegram
) -> None:
    fake_telegram.fail_next("getMe", 502, times=2)
    adapter = make_adapter()
    inbox = Inbox()
    await asyncio.wait_for(adapter.start(inbox), 5)  # returns although Telegram is "down"
    assert adapter.status().state == "retrying"
    assert "NetworkError" in (adapter.status().detail or "")
    await fake_telegram.wait_for("getMe", 3)
    await fake_telegram.wait_for("getUpdates")
    await fake_telegram.wait_until(lambda: adapter.status().state == "connected")
    fake_telegram.user_message(42, "after outage")
    assert (await inbox.next()).text == "after outage"


async def test_polling_trouble_shows_in_status(
    make_adapter: MakeAdapter, fake_telegram: FakeTelegram
) -> None:
    adapter = make_adapter()
    await adapter.start(Inbox())
    fake_telegram.fail_next("getUpdates", 409)
    await fake_telegram.wait_until(lambda: adapter.status().state == "retrying")
    assert "conflict" in (adapter.status().detail or "")


async def test_webhook_mode(
    make_adapter: MakeAdapter, fake_telegram: FakeTelegram, unused_tcp_port: int
) -> None:
    adapter = make_adapter(
        mode="webhook",
        webhookSecret="s3cret",
        webhookPort=unused_tcp_port,
        webhookUrl=f"http://127.0.0.1:{unused_tcp_port}/tg/hook",
    )
    inbox = Inbox()
    await adapter.start(inbox)
    assert adapter.status().state == "connected"
    assert fake_telegram.webhook_url == f"http://127.0.0.1:{unused_tcp_port}/tg/hook"
    assert fake_telegram.webhook_secret == "s3cret"
    assert not fake_telegram.calls_for("getUpdates")
    update = fake_telegram.user_message(42, "via hook", push=False)
    assert await fake_telegram.deliver_webhook(update) == 200
    msg = await inbox.next()
    assert msg.text == "via hook" and msg.chat_id == "42"
    fake_telegram.webhook_secret = "forged"
    assert (
        await fake_telegram.deliver_webhook(fake_telegram.user_message(42, "forged", push=False))
        == 403
    )
    await adapter.send_text(msg.reply_to, "hook reply")
    [call] = await fake_telegram.wait_for("sendMessage")
    assert call.params["text"] == "hook reply"
    assert [m.text for m in inbox.messages] == ["via hook"]


async def test_webhook_without_url_is_rejected(make_adapter: MakeAdapter) -> None:
    adapter = make_adapter(mode="webhook")
    with pytest.raises(ChannelUnavailable, match="webhookUrl"):
        await adapter.start(Inbox())


async def test_factory_builds_one_adapter_per_account(
    fake_telegram: FakeTelegram, make_config: Callable[..., Any]
) -> None:
    from core.engine.channels.build import ChannelEnv, build_adapters

    config = make_config(
        {
            "channels": {
                "webchat": {"enabled": False},
                "telegram": {
                    "botToken": fake_telegram.token,
                    "apiBaseUrl": fake_telegram.base_url,
                    "accounts": {
                        "Work": {
                            "botToken": fake_telegram.token,
                            "apiBaseUrl": fake_telegram.base_url,
                            "mode": "webhook",
                            "webhookUrl": "https://example.test/tg",
                        }
                    },
                },
            }
        }
    )
    adapters = build_adapters(config, ChannelEnv())
    assert [(a.channel, a.account_id) for a in adapters] == [
        ("telegram", "default"),
        ("telegram", "work"),
    ]
    assert all(isinstance(a, TelegramAdapter) and a.text_limit == 4096 for a in adapters)
    assert [a.status().extra["mode"] for a in adapters] == ["polling", "webhook"]


async def test_stop_confirms_what_was_routed(
    make_adapter: MakeAdapter, fake_telegram: FakeTelegram
) -> None:
    """An update routed just before a stop is confirmed by the stop itself: the next poller
    (a restart, or another process taking the connection over) must not get it again."""
    adapter = make_adapter()
    inbox = Inbox()
    await adapter.start(inbox)

    async def polling() -> bool:
        return fake_telegram.pollers() == 1  # the first long poll is held open

    await eventually(polling, 5.0, "a held long poll")
    fake_telegram.hang_next_poll()  # the poll that would confirm it never answers
    update = fake_telegram.user_message(42, "refused, or answered: either way, seen")
    await inbox.next()
    await adapter.stop()
    assert [u for u in fake_telegram.updates if u["update_id"] == update["update_id"]] == []
