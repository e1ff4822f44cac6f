"""D72 on Slack: the approval request as Block Kit buttons, a press as a `block_actions`
interaction over Socket Mode (acknowledged, then routed), the request updated without them; a
stranger's press is ignored and logged, a double click runs the tool once (D11, D120)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from adapters.slack.adapter import SlackAdapter, build
from tests.conftest import RuntimeFactory
from tests.core.features.approvals.helpers import APPROVALS, add_danger_tool
from tests.fakes.model import FakeModelServer, text, tool_call
from tests.fakes.slack import FakeSlack

OWNER = "U0OWNER01"


async def test_an_owner_presses_approve(
    fake_slack: FakeSlack,
    make_runtime: RuntimeFactory,
    fake_model: FakeModelServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    section: dict[str, Any] = {
        "botToken": fake_slack.bot_token,
        "appToken": fake_slack.app_token,
        "apiBaseUrl": fake_slack.base_url,
        "owners": [OWNER],
        "streaming": "off",
        "statusReactions": False,
    }
    rt = await make_runtime({**APPROVALS, "channels": {"slack": section}})
    assert rt.config.channels.slack is not None
    [adapter] = build(rt.config.channels.slack, rt)
    assert isinstance(adapter, SlackAdapter)
    await rt.add_adapter(adapter)
    ran: list[str] = []
    add_danger_tool(rt, ran)
    fake_model.script(tool_call("danger", {"target": "prod"}), text("deleted prod"))
    try:
        await fake_slack.push_event(fake_slack.message_event("D0DM0001", "delete prod", user=OWNER))
        [request] = await fake_slack.wait_for("chat.postMessage", 1, timeout=30)
        assert str(request.params["text"]).startswith("🛡️ Approval needed: danger")
        posted = fake_slack.posted[0]
        assert [e["text"]["text"] for e in posted["blocks"][1]["elements"]] == ["Approve", "Deny"]
        with caplog.at_level(logging.INFO, "core.features.access.admission"):
            await fake_slack.press("D0DM0001", posted["ts"], "Approve", user="U0STRANGE")
            await asyncio.gather(  # a double click: two block actions
                fake_slack.press("D0DM0001", posted["ts"], "Approve", user=OWNER),
                fake_slack.press("D0DM0001", posted["ts"], "Approve", user=OWNER),
            )
            await fake_slack.wait_for("chat.postMessage", 2, timeout=30)
        assert ran == ["prod"]
        # a sender D11 does not admit: refused and logged, no pairing code (D126)
        refused = [r.getMessage() for r in caplog.records if "not admitted" in r.getMessage()]
        assert len(refused) == 1 and "U0STRANGE" in refused[0]
        assert len(fake_slack.calls_for("chat.postMessage")) == 2  # no command replies
        assert fake_slack.posted[0]["text"] == f"🛡️ Approved by {OWNER.lower()}: danger"
        assert fake_slack.posted[0]["blocks"] == []
        assert fake_slack.posted[1]["text"] == "deleted prod"
    finally:
        await adapter.stop()


async def test_status_reactions_on_slack(
    fake_slack: FakeSlack, make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    """D74: 👀 when the turn starts, then ✅ in its place (Slack's emoji names)."""
    section: dict[str, Any] = {
        "botToken": fake_slack.bot_token,
        "appToken": fake_slack.app_token,
        "apiBaseUrl": fake_slack.base_url,
        "owners": [OWNER],
        "streaming": "off",
    }
    rt = await make_runtime({"channels": {"slack": section}})
    assert rt.config.channels.slack is not None
    [adapter] = build(rt.config.channels.slack, rt)
    assert isinstance(adapter, SlackAdapter)
    await rt.add_adapter(adapter)
    fake_model.script(text("hello"))
    try:
        event = fake_slack.message_event("D0DM0001", "hi", user=OWNER)
        await fake_slack.push_event(event)
        await fake_slack.wait_for("chat.postMessage", 1, timeout=30)
        await fake_slack.wait_for("reactions.add", 2, timeout=30)
        calls = [
            (c.method, c.params["name"], c.params["timestamp"])
            for c in fake_slack.calls
            if c.method.startswith("reactions.")
        ]
        ts = event["ts"]
        assert calls == [
            ("reactions.add", "eyes", ts),
            ("reactions.remove", "eyes", ts),
            ("reactions.add", "white_check_mark", ts),
        ]
    finally:
        await adapter.stop()


async def test_a_slash_command_from_the_manifest_is_a_command(
    fake_slack: FakeSlack, make_runtime: RuntimeFactory
) -> None:
    """D74: Slack sends `/help` typed in the box as a `slash_commands` envelope; it is acked and
    answered like the typed command."""
    section: dict[str, Any] = {
        "botToken": fake_slack.bot_token,
        "appToken": fake_slack.app_token,
        "apiBaseUrl": fake_slack.base_url,
        "owners": [OWNER],
        "streaming": "off",
    }
    rt = await make_runtime({"channels": {"slack": section}})
    assert rt.config.channels.slack is not None
    [adapter] = build(rt.config.channels.slack, rt)
    assert isinstance(adapter, SlackAdapter)
    await rt.add_adapter(adapter)
    try:
        payload = {
            "token": "verification-token",
            "team_id": fake_slack.team_id,
            "channel_id": "D0DM0001",
            "channel_name": "directmessage",
            "user_id": OWNER,
            "user_name": "owner",
            "command": "/help",
            "text": "",
            "api_app_id": fake_slack.app_id,
            "response_url": f"{fake_slack.base_url}/commands/response",
            "trigger_id": "trigger.1",
        }
        await fake_slack.push_event(payload, envelope_type="slash_commands")
        [reply] = await fake_slack.wait_for("chat.postMessage", 1, timeout=30)
        assert "/approve" in str(reply.params["text"])  # the owner's /help lists every command
        assert reply.params["channel"] == "D0DM0001"
    finally:
        await adapter.stop()


async def test_a_question_in_a_thread_is_answered_by_a_press(
    fake_slack: FakeSlack, make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    """D73 in a channel thread: the press carries the thread (and the channel's kind), so it
    lands in the session the question was asked in and answers it."""
    section: dict[str, Any] = {
        "botToken": fake_slack.bot_token,
        "appToken": fake_slack.app_token,
        "apiBaseUrl": fake_slack.base_url,
        "owners": [OWNER],
        "allowFrom": ["*"],
        "groupPolicy": "open",
        "streaming": "off",
        "statusReactions": False,
    }
    rt = await make_runtime({"channels": {"slack": section}})
    assert rt.config.channels.slack is not None
    [adapter] = build(rt.config.channels.slack, rt)
    assert isinstance(adapter, SlackAdapter)
    await rt.add_adapter(adapter)
    fake_model.script(
        tool_call("ask_user", {"question": "Which colour?", "options": ["red", "blue"]}),
        text("blue it is"),
    )
    try:
        room, parent = "G0PRIVATE1", fake_slack.next_ts()
        event = fake_slack.message_event(
            room,
            f"<@{fake_slack.bot_user_id}> paint it",
            channel_type="group",
            user="U0USER002",
            thread_ts=parent,
        )
        await fake_slack.push_event(event)
        [asked] = await fake_slack.wait_for("chat.postMessage", 1, timeout=30)
        assert asked.params["thread_ts"] == parent
        shown = fake_slack.posted[0]
        await fake_slack.press(room, shown["ts"], "blue", user="U0USER002")
        replies = await fake_slack.wait_for("chat.postMessage", 2, timeout=30)
        assert replies[-1].params["text"] == "blue it is"
        assert replies[-1].params["thread_ts"] == parent
        assert fake_slack.posted[0]["text"].startswith("❓ Which colour?\n✅ blue")
        assert len(fake_model.requests) == 2
    finally:
        await adapter.stop()
