"""The watchdog (decision D16): a channel that stops receiving without an error is reconnected,
and a message sent afterwards is answered.

Telegram: the fake holds one `getUpdates` forever (PTB's own read timeout is set far beyond the
test's deadline, so only the watchdog can end it). Slack: the fake's socket stays open but
sends nothing more, not even pongs.
"""

from __future__ import annotations

import pytest

from adapters.slack.adapter import SlackAdapter
from adapters.slack.adapter import build as build_slack
from adapters.telegram.adapter import TelegramAdapter
from adapters.telegram.adapter import build as build_telegram
from core.store import now_ms
from tests.conftest import RuntimeFactory
from tests.fakes.slack import FakeSlack
from tests.fakes.telegram import FakeTelegram

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")

WATCHDOG = {"gateway": {"watchdogSeconds": 1.5}}


async def test_hanging_long_poll_is_restarted(
    fake_telegram: FakeTelegram, make_runtime: RuntimeFactory
) -> None:
    rt = await make_runtime(
        {
            **WATCHDOG,
            "channels": {
                "telegram": {
                    "botToken": fake_telegram.token,
                    "apiBaseUrl": fake_telegram.base_url,
                    "owners": ["42"],
                    "streaming": "off",
                }
            },
        }
    )
    assert rt.config.channels.telegram is not None
    [adapter] = build_telegram(rt.config.channels.telegram, rt)
    assert isinstance(adapter, TelegramAdapter)
    adapter.poll_timeout = 0.2
    adapter.request_timeout = 60  # PTB would give up on the held poll only after a minute
    try:
        await rt.add_adapter(adapter)
        await fake_telegram.wait_for("getUpdates", 2)
        fake_telegram.hang_next_poll()
        polls = len(fake_telegram.calls_for("getUpdates"))
        await fake_telegram.wait_for("getUpdates", polls + 1)  # this one hangs
        hung_at = now_ms()
        fake_telegram.user_message(42, "are you there?")
        [reply] = await fake_telegram.wait_for("sendMessage", 1, timeout=20)
        assert reply.params["text"] == "echo: are you there?"
        assert adapter.status().state == "connected"
        assert adapter.last_receive_ms is not None and adapter.last_receive_ms > hung_at
    finally:
        await adapter.stop()


async def test_silent_socket_is_replaced(
    fake_slack: FakeSlack, make_runtime: RuntimeFactory
) -> None:
    rt = await make_runtime(
        {
            **WATCHDOG,
            "channels": {
                "slack": {
                    "botToken": fake_slack.bot_token,
                    "appToken": fake_slack.app_token,
                    "apiBaseUrl": fake_slack.base_url,
                    "dmPolicy": "open",
                    "streaming": "off",
                }
            },
        }
    )
    assert rt.config.channels.slack is not None
    [adapter] = build_slack(rt.config.channels.slack, rt)
    assert isinstance(adapter, SlackAdapter)
    adapter._ping_interval = 0.3
    try:
        await rt.add_adapter(adapter)
        await fake_slack.wait_for("socket.connect", 1)
        fake_slack.go_silent()
        silent_at = now_ms()
        await fake_slack.wait_for("socket.connect", 2, timeout=20)
        assert len(fake_slack.calls_for("apps.connections.open")) >= 2
        await fake_slack.push_event(fake_slack.message_event("D0DM0001", "still there?"))
        [post] = await fake_slack.wait_for("chat.postMessage", timeout=20)
        assert post.params["text"] == "echo: still there?"
        assert adapter.last_receive_ms is not None and adapter.last_receive_ms > silent_at
    finally:
        await adapter.stop()
