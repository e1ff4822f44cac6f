"""D72 on Telegram: the approval request's inline keyboard, a press as a callback query, the
edited request; a stranger's press (logged), a double tap and a redelivered press change
nothing (D11, D16, D120)."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

from core.runtime import Runtime
from tests.adapters.telegram.runtime import add_telegram
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
    adapter = await add_telegram(rt)
    yield rt
    await adapter.stop()


def _sent(fake: FakeTelegram, method: str) -> list[dict[str, Any]]:
    return [c.params for c in fake.calls if c.method == method]


async def test_an_owner_taps_approve_and_the_tool_runs_once(
    gateway: Runtime,
    fake_telegram: FakeTelegram,
    fake_model: FakeModelServer,
    caplog: pytest.LogCaptureFixture,
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

    with caplog.at_level(logging.WARNING, "core.features.inbound.router"):
        stranger = fake_telegram.press(message_id, "Approve", user_id=7, username="mallory")
        await fake_telegram.wait_for("answerCallbackQuery", 1, timeout=30)
        press = fake_telegram.press(message_id, "Approve", user_id=OWNER)
        fake_telegram.press(message_id, "Approve", user_id=OWNER)  # a double tap: 2 queries
        fake_telegram.redeliver(press)  # Telegram sends it again: it counts once (D16)
        await fake_telegram.wait_for("sendMessage", 2, timeout=30)
        await fake_telegram.wait_for("answerCallbackQuery", 3, timeout=30)
    assert ran == ["prod"]
    ignored = [r.getMessage() for r in caplog.records if "press ignored" in r.getMessage()]
    assert ignored == [
        f"button press ignored: telegram:7 is not an owner ('/approve {approval.id}')"
    ]
    shown = fake_telegram.shown[message_id]
    assert shown["text"] == "🛡️ Approved by Alice: danger" and shown["reply_markup"] is None
    assert _sent(fake_telegram, "sendMessage")[-1]["text"] == "deleted prod"
    assert "callback_query" in json.dumps(stranger)
    assert len(_sent(fake_telegram, "answerCallbackQuery")) >= 3  # every press is acknowledged
    assert len(_sent(fake_telegram, "sendMessage")) == 2  # presses get no command reply
    assert len(fake_model.requests) == 2


def _reactions(fake: FakeTelegram) -> list[str]:
    return [
        (c["reaction"][0]["emoji"] if c["reaction"] else "")
        for c in _sent(fake, "setMessageReaction")
    ]


async def test_status_reactions_around_a_turn(
    gateway: Runtime, fake_telegram: FakeTelegram, fake_model: FakeModelServer
) -> None:
    fake_model.script(text("hello"))
    update = fake_telegram.user_message(OWNER, "hi")
    await fake_telegram.wait_for("sendMessage", 1, timeout=30)
    await fake_telegram.wait_for("setMessageReaction", 2, timeout=30)
    assert _reactions(fake_telegram) == ["👀", "👍"]  # Telegram's list has no ✅ for bots
    (first, _) = _sent(fake_telegram, "setMessageReaction")
    assert first["message_id"] == update["message"]["message_id"]


async def test_no_reactions_where_the_bot_may_not_speak(
    gateway: Runtime, fake_telegram: FakeTelegram, fake_model: FakeModelServer
) -> None:
    fake_telegram.user_message(OWNER, "/send off")
    await fake_telegram.wait_for("sendMessage", 1, timeout=30)
    fake_telegram.user_message(OWNER, "are you there?")
    fake_model.script(text("should not be sent"))
    fake_telegram.user_message(OWNER, "/send on")
    await fake_telegram.wait_for("sendMessage", 2, timeout=30)
    assert _reactions(fake_telegram) == []


async def test_the_command_menu_per_scope(
    gateway: Runtime, fake_telegram: FakeTelegram, fake_model: FakeModelServer
) -> None:
    """D74: everyone's commands in the default scope at start; every command in the owner's
    chat once Telegram accepts that scope (after the owner's first message)."""
    await fake_telegram.wait_for("setMyCommands", 2, timeout=30)  # default ok, owner refused
    everyone = fake_telegram.menus["default"]
    assert "help" in everyone and "approve" not in everyone and "send" not in everyone
    assert str(OWNER) not in fake_telegram.menus
    fake_model.script(text("hi"))
    fake_telegram.user_message(OWNER, "hello")
    await fake_telegram.wait_for("setMyCommands", 3, timeout=30)
    mine = fake_telegram.menus[str(OWNER)]
    assert {"approve", "deny", "send", "help"} <= set(mine)
