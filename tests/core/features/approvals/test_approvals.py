"""D72 end to end on the real turn executor and the fake model: pause, request, decide, resume."""

from __future__ import annotations

import json
from typing import Any

from core.api.testing import RecordingAdapter
from core.model.approvals import AWAITING
from tests.conftest import RuntimeFactory
from tests.core.features.approvals.helpers import APPROVALS, add_danger_tool
from tests.fakes.model import FakeModelServer, text, tool_call
from tests.polling import eventually

OWNERS = {"channels": {"telegram": {"owners": ["owner-1"]}}}


def _config(**extra: Any) -> dict[str, Any]:
    return {**APPROVALS, **extra}


def _tool_results(request: dict[str, Any]) -> list[Any]:
    return [json.loads(m["content"]) for m in request["messages"] if m["role"] == "tool"]


async def _paused(rt: Any, adapter: RecordingAdapter, sender: str = "owner-1") -> str:
    await adapter.say("delete it", chat_id="chat-1", sender=sender)
    sent = await adapter.wait_for("🛡️ Approval needed", 1)
    pending = await rt.approvals.pending()
    assert len(pending) == 1
    approval = pending[0]
    assert sent[0][1] == (
        '🛡️ Approval needed: danger {"target":"prod"}\n'
        f"/approve {approval.id} · /deny {approval.id}"
    )
    run = await rt.store.get_run(approval.run_id)
    assert run is not None and run.status == AWAITING
    return str(approval.id)


async def test_an_approved_call_runs_once_and_the_run_answers(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    adapter = RecordingAdapter("telegram")
    rt = await make_runtime({**_config(), **OWNERS}, adapters=[adapter])
    ran: list[str] = []
    add_danger_tool(rt, ran)
    fake_model.script(tool_call("danger", {"target": "prod"}), text("deleted prod"))
    approval_id = await _paused(rt, adapter)
    assert ran == []  # nothing ran before the owner's yes
    message_id = next(iter(adapter.buttons))
    assert [b.label for b in adapter.buttons[message_id]] == ["Approve", "Deny"]

    await adapter.press(message_id, "Approve", sender_id="owner-1", chat_id="chat-1", press_id="p1")
    await adapter.wait_for("deleted prod", 1)
    assert ran == ["prod"]
    assert adapter.edits == [(message_id, "🛡️ Approved by owner-1: danger")]
    assert _tool_results(fake_model.requests[-1]) == [{"status": "ok", "deleted": "prod"}]
    # a second press (and a redelivery of the first) change nothing
    adapter.buttons[message_id] = ()  # the button is gone; press through the command instead
    await adapter.say(f"/approve {approval_id}", chat_id="chat-1", sender="owner-1")
    await adapter.wait_for(f"⚙️ Approval {approval_id} was already approved.", 1)
    assert ran == ["prod"] and len(fake_model.requests) == 2
    stored = await rt.store.question(approval_id)
    assert stored is not None and stored.status == "approved" and stored.decided_by == "owner-1"


async def test_a_denied_call_gives_the_model_denied(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    adapter = RecordingAdapter("telegram")
    rt = await make_runtime({**_config(), **OWNERS}, adapters=[adapter])
    ran: list[str] = []
    add_danger_tool(rt, ran)
    fake_model.script(tool_call("danger", {"target": "prod"}), text("ok, not deleting"))
    approval_id = await _paused(rt, adapter)
    await adapter.say(f"/deny {approval_id}", chat_id="chat-1", sender="owner-1")
    await adapter.wait_for("ok, not deleting", 1)
    assert ran == []
    assert _tool_results(fake_model.requests[-1]) == [{"status": "denied"}]
    assert adapter.texts("🛡️ Denied by owner-1: danger")  # the command's reply


async def test_a_press_by_a_non_owner_is_ignored(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    adapter = RecordingAdapter("telegram")
    rt = await make_runtime(
        {**_config(), "channels": {"telegram": {"owners": ["owner-1"], "allowFrom": ["*"]}}},
        adapters=[adapter],
    )
    ran: list[str] = []
    add_danger_tool(rt, ran)
    fake_model.script(tool_call("danger", {"target": "prod"}), text("deleted prod"))
    await _paused(rt, adapter)
    message_id = next(iter(adapter.buttons))
    sent = len(adapter.sent)
    await adapter.press(message_id, "Approve", sender_id="stranger", chat_id="chat-1", press_id="x")
    assert ran == [] and len(adapter.sent) == sent and adapter.edits == []
    assert (await rt.approvals.pending())[0].status == "pending"


async def test_a_non_owner_turn_asks_each_owner_in_their_dm(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    adapter = RecordingAdapter("telegram")
    rt = await make_runtime(
        {**_config(), "channels": {"telegram": {"owners": ["o1", "o2"], "allowFrom": ["*"]}}},
        adapters=[adapter],
    )
    add_danger_tool(rt, [])
    fake_model.script(tool_call("danger", {"target": "prod"}), text("done"))
    await adapter.say("delete it", chat_id="guest", sender="guest")
    sent = await adapter.wait_for("🛡️ Approval needed", 2)
    assert sorted(t.to or "" for t, _ in sent) == ["o1", "o2"]
    await eventually(lambda: rt.approvals.pending())
