"""D72 on Telegram: the approval request's inline keyboard, a press as a callback query, the
edited request; a stranger's press and a redelivered press change nothing (D11, D16)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from adapters.telegram.adapter import TelegramAdapter, build
from core.runtime import Runtime
from tests.conftest import RuntimeFactory
from tests.core.features.approvals.helpers import APPROVALS, add_danger_tool
from tests.fakes.model import FakeModelServer, text, tool_call
from tests.fakes.telegram import FakeTelegram

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")

OWNER = 42


@pytest.fixture
async def gateway(
    fake_telegram: FakeTelegram, make_runtime: RuntimeFactory
) -> AsyncIterator[Runtime]:
    section = {
        "botToken": fake_telegram.token,
        "apiBaseUrl": fake_telegram.base_url,
        "owners": [str(OWNER)],
        "allowFrom": ["*"],
        "streaming": "off",
    }
    rt = await make_runtime({**APPROVALS, "channels": {"telegram": section}})
    assert rt.config.channels.telegram is not None
    [adapter] = build(rt.config.channels.telegram, rt)
    assert isinstance(adapter, TelegramAdapter)
    adapter.poll_timeout = 1
    await rt.add_adapter(adapter)
    yield rt
    await adapter.stop()


def _sent(fake: FakeTelegram, method: str) -> list[dict[str, Any]]:
    return [c.params for c in fake.calls if c.method == method]


async def test_an_owner_taps_approve_and_the_tool_runs_once(
    gateway: Runtime, fake_telegram: FakeTelegram, fake_model: FakeModelServer
) -> None:
    ran: list[str] = []
    add_danger_tool(gateway, ran)
    fake_model.script(tool_call("danger", {"target": "prod"}), text("deleted prod"))
    fake_telegram.user_message(OWNER, "delete prod")
    await fake_telegram.wait_for("sendMessage", 1, timeout=30)
    (request,) = _sent(fake_telegram, "sendMessage")
    (approval,) = await gateway.approvals.pending()
    assert request["text"].startswith('🛡️ Approval needed: danger {"target":"prod"}')
    keyboard = request["reply_markup"]["inline_keyboard"]
    assert [[b["text"] for b in row] for row in keyboard] == [["Approve", "Deny"]]
    assert keyboard[0][0]["callback_data"] == f"/approve {approval.id}"
    message_id = max(fake_telegram.shown)

    stranger = fake_telegram.press(message_id, "Approve", user_id=7, username="mallory")
    await fake_telegram.wait_for("answerCallbackQuery", 1, timeout=30)
    press = fake_telegram.press(message_id, "Approve", user_id=OWNER)
    fake_telegram.redeliver(press)  # Telegram sends it again: it counts once (D16)
    await fake_telegram.wait_for("sendMessage", 2, timeout=30)
    assert ran == ["prod"]
    shown = fake_telegram.shown[message_id]
    assert shown["text"] == "🛡️ Approved by Alice: danger" and shown["reply_markup"] is None
    assert _sent(fake_telegram, "sendMessage")[-1]["text"] == "deleted prod"
    assert "callback_query" in json.dumps(stranger)
    assert len(_sent(fake_telegram, "answerCallbackQuery")) >= 2  # every press is acknowledged
    assert len(fake_model.requests) == 2
