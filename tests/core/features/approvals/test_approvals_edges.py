"""D72 from the outside: HTTP routes (in the OpenAPI document), expiry, a restart between."""

from __future__ import annotations

import json
from typing import Any

from aiohttp.test_utils import TestClient, TestServer

from core.api.testing import RecordingAdapter
from core.edge.http.server import build_app
from core.model.approvals import Approval
from core.runtime import Runtime
from tests.conftest import RuntimeFactory
from tests.core.features.approvals.helpers import APPROVALS, add_danger_tool
from tests.fakes.model import FakeModelServer, text, tool_call

AUTH = {"Authorization": "Bearer test-token"}
CONFIG: dict[str, Any] = {**APPROVALS, "channels": {"telegram": {"owners": ["owner-1"]}}}


async def _pause(rt: Runtime, adapter: RecordingAdapter) -> str:
    await adapter.say("delete it", chat_id="chat-1", sender="owner-1")
    await adapter.wait_for("🛡️ Approval needed", 1)
    (approval,) = await rt.approvals.pending()
    return approval.id


async def _paused_for_a_minute(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> tuple[Runtime, RecordingAdapter, list[str], str, Approval]:
    """A run paused on `danger`, whose approval times out after a minute; the model then says
    "gave up". Returns the runtime, its adapter, the tool's runs, the approval's id and row."""
    adapter = RecordingAdapter("telegram")
    rt = await make_runtime(
        {**CONFIG, "tools": {"approvals": {"require": ["danger"], "timeoutMinutes": 1}}},
        adapters=[adapter],
    )
    ran: list[str] = []
    add_danger_tool(rt, ran)
    fake_model.script(tool_call("danger", {"target": "prod"}), text("gave up"))
    approval_id = await _pause(rt, adapter)
    (approval,) = await rt.approvals.pending()
    return rt, adapter, ran, approval_id, approval


async def test_http_lists_and_decides_once(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    adapter = RecordingAdapter("telegram")
    rt = await make_runtime(CONFIG, adapters=[adapter])
    ran: list[str] = []
    add_danger_tool(rt, ran)
    fake_model.script(tool_call("danger", {"target": "prod"}), text("deleted prod"))
    approval_id = await _pause(rt, adapter)
    async with TestClient(TestServer(build_app(rt, "test-token", []))) as c:
        assert (await c.get("/api/approvals")).status == 401
        spec = await (await c.get("/openapi.json")).json()
        for path in ("/api/approvals", "/api/approvals/{id}/approve", "/api/approvals/{id}/deny"):
            assert path in spec["paths"]
        body = await (await c.get("/api/approvals", headers=AUTH)).json()
        (row,) = body["approvals"]
        assert row["id"] == approval_id and row["tool"] == "danger"
        assert row["arguments"] == {"target": "prod"}
        assert row["sessionKey"] == "agent:main:main" or row["sessionKey"].startswith("agent:")
        assert row["expiresAt"] - row["createdAt"] == 60 * 60_000
        resp = await c.post(f"/api/approvals/{approval_id}/approve", headers=AUTH)
        assert resp.status == 200, await resp.text()
        await adapter.wait_for("deleted prod", 1)
        again = await c.post(f"/api/approvals/{approval_id}/deny", headers=AUTH)
        assert again.status == 409
        assert (await again.json())["error"]["message"] == (
            f"Approval {approval_id} was already approved."
        )
        assert (await c.post("/api/approvals/NOPE2345/approve", headers=AUTH)).status == 404
        assert (await (await c.get("/api/approvals", headers=AUTH)).json()) == {"approvals": []}
    assert ran == ["prod"]
    assert adapter.edits[-1][1] == "🛡️ Approved by the owner: danger"


async def test_an_unanswered_approval_expires_and_the_model_hears_denied(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt, adapter, ran, approval_id, approval = await _paused_for_a_minute(make_runtime, fake_model)
    rt.approvals.clock = lambda: approval.expires_at - 1
    assert await rt.approvals.expire_due() == 0
    rt.approvals.clock = lambda: approval.expires_at
    assert await rt.approvals.expire_due() == 1
    await adapter.wait_for("gave up", 1)
    assert ran == []
    assert adapter.edits[-1][1] == "🛡️ Expired: danger"
    tool_msgs = [m for m in fake_model.requests[-1]["messages"] if m["role"] == "tool"]
    assert [json.loads(m["content"]) for m in tool_msgs] == [{"status": "denied"}]
    stored = await rt.store.question(approval_id)
    assert stored is not None and stored.status == "expired"


async def test_a_press_after_the_timeout_is_too_late_even_before_the_sweep(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    """D187: the sweep runs every 5 s (and only once a restarted process is up); an Approve
    pressed after `expiresAt` but before the sweep ran the tool anyway."""
    rt, adapter, ran, approval_id, approval = await _paused_for_a_minute(make_runtime, fake_model)
    rt.approvals.clock = lambda: approval.expires_at
    late = await rt.approvals.decide(approval_id, "approved", by="owner-1")
    assert late.approval is None and late.error == f"Approval {approval_id} was already expired."
    await adapter.wait_for("gave up", 1)
    assert ran == []
    assert adapter.edits[-1][1] == "🛡️ Expired: danger"
    stored = await rt.store.question(approval_id)
    assert stored is not None and stored.status == "expired"


async def test_a_paused_run_survives_a_restart_without_a_notice(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    adapter = RecordingAdapter("telegram")
    rt = await make_runtime(CONFIG, adapters=[adapter])
    add_danger_tool(rt, [])
    fake_model.script(tool_call("danger", {"target": "prod"}), text("deleted prod"))
    approval_id = await _pause(rt, adapter)
    await rt.stop()

    again = RecordingAdapter("telegram")
    rt2 = await make_runtime(CONFIG, adapters=[again])
    ran: list[str] = []
    add_danger_tool(rt2, ran)
    assert [a.id for a in await rt2.approvals.pending()] == [approval_id]
    assert again.sent == []  # a paused run is not aborted and gets no restart notice
    await again.say(f"/approve {approval_id}", chat_id="chat-1", sender="owner-1")
    await again.wait_for("deleted prod", 1)
    assert ran == ["prod"]
