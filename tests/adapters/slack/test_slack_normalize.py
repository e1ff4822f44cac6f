"""Slack event → InboundMessage rules (no I/O)."""

from __future__ import annotations

from typing import Any

import pytest

from adapters.slack.normalize import (
    BotIdentity,
    SeenEvents,
    channel_of_target,
    chat_type_of,
    ignore_reason,
    to_inbound,
)

BOT = BotIdentity(user_id="U0BOT", bot_id="B0BOT", user_name="crosstalk")


def event(**over: Any) -> dict[str, Any]:
    return {
        "type": "message",
        "channel": "C0CHAN",
        "channel_type": "channel",
        "user": "U0A",
        "text": "hi",
        "ts": "1700000000.000100",
        **over,
    }


@pytest.mark.parametrize(
    ("channel_type", "chat_type"),
    [("im", "direct"), ("channel", "channel"), ("group", "group"), ("mpim", "group")],
)
def test_chat_types(channel_type: str, chat_type: str) -> None:
    msg = to_inbound(
        event(channel="D0X" if channel_type == "im" else "C0X", channel_type=channel_type),
        account_id="default",
        bot=BOT,
        chat_type=chat_type_of(event(channel_type=channel_type)),
    )
    assert msg.chat_type == chat_type
    assert msg.chat_id == ("U0A" if chat_type == "direct" else "C0X")
    assert msg.reply_to.to == ("channel:D0X" if chat_type == "direct" else "channel:C0X")
    assert msg.reply_to.channel == "slack" and msg.timestamp_ms == 1700000000000


def test_chat_type_without_channel_type() -> None:
    mention = {"type": "app_mention", "channel": "G0PRIV"}
    assert chat_type_of(mention) == "group"
    assert chat_type_of({**mention, "channel": "C0PUB"}) == "channel"
    assert chat_type_of({**mention, "channel": "C0PRIV"}, "group") == "group"


def test_thread_mention_and_reply_to_bot() -> None:
    msg = to_inbound(
        event(text="<@U0BOT> hey", thread_ts="1.0", parent_user_id="U0BOT"),
        account_id="work",
        bot=BOT,
        chat_type="channel",
    )
    assert msg.mentioned and msg.reply_to_bot
    assert msg.thread_id == "1.0" and msg.reply_to.thread_id == "1.0"
    assert msg.reply_to.account_id == "work" and msg.account_id == "work"
    plain = to_inbound(event(), account_id="default", bot=BOT, chat_type="channel")
    assert not plain.mentioned and not plain.reply_to_bot and plain.thread_id is None
    mention = to_inbound(
        event(type="app_mention"), account_id="default", bot=BOT, chat_type="channel"
    )
    assert mention.mentioned


@pytest.mark.parametrize(
    ("over", "ignored"),
    [
        ({}, False),
        ({"subtype": "thread_broadcast"}, False),
        ({"subtype": "file_share"}, False),
        ({"subtype": "message_changed"}, True),
        ({"subtype": "channel_join"}, True),
        ({"subtype": "bot_message", "bot_id": "B0X"}, True),
        ({"bot_id": "B0X"}, True),
        ({"user": "U0BOT"}, True),
        ({"user": None}, True),
    ],
)
def test_ignore_rules(over: dict[str, Any], ignored: bool) -> None:
    assert (ignore_reason(event(**over), BOT) is not None) is ignored


def test_seen_events_bounded() -> None:
    seen = SeenEvents(size=2)
    assert seen.first_time("C", "1") and not seen.first_time("C", "1")
    assert seen.first_time("C", "2") and seen.first_time("D", "1")
    assert seen.first_time("C", "1")  # forgotten after the bound


def test_targets() -> None:
    assert channel_of_target("channel:C0AbC") == "C0AbC"
    assert channel_of_target("user:U0X") == "U0X"
    assert channel_of_target("D0X") == "D0X"
