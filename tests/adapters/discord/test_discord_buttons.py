"""D72 on Discord: the approval request's buttons (message components), a press as a
component interaction (acknowledged, then routed), the request edited without its buttons; a
stranger's press is ignored and logged, a double click runs the tool once (D11, D120)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from tests.adapters.discord.runtime import add_discord
from tests.conftest import RuntimeFactory
from tests.core.features.approvals.helpers import APPROVALS, add_danger_tool
from tests.fakes.discord import FakeDiscord
from tests.fakes.model import FakeModelServer, text, tool_call

OWNER, STRANGER = 800000000001, 800000000007
DM = 900000000001


async def test_an_owner_presses_approve_in_a_dm(
    fake_discord: FakeDiscord,
    make_runtime: RuntimeFactory,
    fake_model: FakeModelServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    section: dict[str, Any] = {
        "token": fake_discord.token,
        "owners": [str(OWNER)],
        "streaming": "off",
        "statusReactions": False,
    }
    rt = await make_runtime({**APPROVALS, "channels": {"discord": section}})
    adapter = await add_discord(rt)
    ran: list[str] = []
    add_danger_tool(rt, ran)
    fake_model.script(tool_call("danger", {"target": "prod"}), text("deleted prod"))
    try:
        await fake_discord.user_message(DM, "delete prod", author_id=OWNER)
        [request] = await fake_discord.wait_for("createMessage", 1, timeout=30)
        assert request.params["content"].startswith("🛡️ Approval needed: danger")
        labels = [c["label"] for c in request.params["components"][0]["components"]]
        assert labels == ["Approve", "Deny"]
        message_id = next(iter(fake_discord.shown))
        with caplog.at_level(logging.INFO, "core.features.access.admission"):
            await fake_discord.press(message_id, "Approve", user_id=STRANGER, username="mallory")
            [ack] = await fake_discord.wait_for("interactionCallback", 1, timeout=30)
            assert ack.status == 200 and ack.params["type"] == 6  # a deferred update, no message
            await asyncio.gather(  # a double click: two interactions
                fake_discord.press(message_id, "Approve", user_id=OWNER),
                fake_discord.press(message_id, "Approve", user_id=OWNER),
            )
            await fake_discord.wait_for("interactionCallback", 3, timeout=30)
            await fake_discord.wait_for("createMessage", 2, timeout=30)
        assert ran == ["prod"]
        # a sender D11 does not admit: refused and logged, no pairing code (D126)
        refused = [r.getMessage() for r in caplog.records if "not admitted" in r.getMessage()]
        assert len(refused) == 1 and str(STRANGER) in refused[0]
        assert len(fake_discord.created_messages()) == 2  # presses get no command reply
        shown = fake_discord.shown[message_id]
        assert shown["content"] == "🛡️ Approved by Alice: danger"
        assert shown["components"] == []
    finally:
        await adapter.stop()


async def test_a_question_in_a_thread_is_answered_by_a_press(
    fake_discord: FakeDiscord, make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    """D73 in a server thread: the press's chat is the thread's session, as its messages' are,
    so the tap answers the question asked there."""
    section: dict[str, Any] = {
        "token": fake_discord.token,
        "owners": [str(OWNER)],
        "allowFrom": ["*"],
        "groupPolicy": "open",
        "streaming": "off",
        "statusReactions": False,
    }
    rt = await make_runtime({"channels": {"discord": section}})
    adapter = await add_discord(rt)
    fake_model.script(
        tool_call("ask_user", {"question": "Which colour?", "options": ["red", "blue"]}),
        text("blue it is"),
    )
    try:
        thread = fake_discord.THREAD_ID
        await fake_discord.user_message(
            thread, "paint it", thread=True, mentions_bot=True, author_id=STRANGER
        )
        [asked] = await fake_discord.wait_for("createMessage", 1, timeout=30)
        assert asked.params["channel_id"] == str(thread)
        message_id = next(iter(fake_discord.shown))
        await fake_discord.press(message_id, "blue", user_id=STRANGER)
        replies = await fake_discord.wait_for("createMessage", 2, timeout=30)
        assert replies[-1].params["content"] == "blue it is"
        assert replies[-1].params["channel_id"] == str(thread)
        assert fake_discord.shown[message_id]["content"] == "❓ Which colour?\n✅ blue"
        assert len(fake_model.requests) == 2
    finally:
        await adapter.stop()
