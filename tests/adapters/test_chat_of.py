"""Every form of a chat a platform's `send_text` accepts maps to the `to` its own messages carry
(D179), so the send policy of the chat a delivery lands in (D140) is found however a cron job,
a webhook mapping or an agent wrote the target. (Telegram end to end, through the gate:
tests/adapters/telegram/test_telegram_target_forms.py.)"""

from __future__ import annotations

import pytest

from adapters.discord.normalize import chat_of_target as discord_chat
from adapters.matrix.send import room_id
from adapters.slack.normalize import chat_of_target as slack_chat
from adapters.telegram.sending import _chat_id


@pytest.mark.parametrize("to", ["123", " 123 ", "channel:123", "discord:channel:123"])
def test_discord(to: str) -> None:
    assert discord_chat(to) == "channel:123"


@pytest.mark.parametrize("to", ["C123", " C123", "channel:C123", "group:C123", "im: C123"])
def test_slack(to: str) -> None:
    assert slack_chat(to) == "channel:C123"
    assert slack_chat("user:U1") == "user:U1"


@pytest.mark.parametrize("to", ["!r:hs", "room:!r:hs", "matrix:group:!r:hs", " !r:hs "])
def test_matrix(to: str) -> None:
    assert room_id(to) == "!r:hs"


@pytest.mark.parametrize("to", ["-100123", "group:-100123", "tg:-100123", "telegram: -100123"])
def test_telegram(to: str) -> None:
    assert str(_chat_id(to)) == "-100123"
