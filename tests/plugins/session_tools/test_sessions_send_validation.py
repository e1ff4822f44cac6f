"""`sessions_send` validation (R2.3): what is refused, in which order and with which text, before
anything runs; cross-agent and sandbox visibility; sending by label."""

from __future__ import annotations

import json

import pytest

from core.engine.runs import RunRequest
from core.model.errors import ToolInputError
from tests.conftest import RuntimeFactory
from tests.fakes.model import FakeModelServer, text, tool_call, tool_results
from tests.plugins.session_tools.send_helpers import (
    MAIN,
    NO_A2A,
    OTHER,
    REQ,
    TARGET,
    a2a_done,
    assert_uuid,
    requester,
    runs_in,
    send,
)

# ---- validation ------------------------------------------------------------------------------


async def test_message_required_is_thrown_before_anything_else(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await make_runtime()
    for args in ({"sessionKey": "main"}, {"sessionKey": "main", "label": "x", "message": "  "}):
        with pytest.raises(ToolInputError, match=r"^message required$"):
            await send(rt, args)
    # Through an agent turn the thrown error becomes the reference's payload.
    fake_model.script(tool_call("sessions_send", {"sessionKey": "main"}), text("ok"))
    entry = await rt.services.ensure_session(REQ)
    run = await rt.services.start_run(RunRequest(REQ, "go", rt.services.context_for(entry)))
    assert (await rt.runs.wait(run.id, 10)).status == "ok"
    payload = json.loads(tool_results(fake_model.requests[1])[0]["content"])
    assert payload == {"status": "error", "tool": "sessions_send", "error": "message required"}
    assert len(fake_model.requests) == 2


async def test_key_and_label_together_is_refused_with_a_run_id(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await make_runtime()
    await rt.services.ensure_session(TARGET)
    await rt.store.set_label(TARGET, "worker")
    out = await send(rt, {"sessionKey": TARGET, "label": "worker", "message": "hi"})
    assert out["status"] == "error"
    assert out["error"] == "Provide either sessionKey or label (not both)."
    assert_uuid(out["runId"])
    assert "sessionKey" not in out
    out = await send(rt, {"message": "hi", "label": "   "})
    assert out["error"] == "Either sessionKey or label is required"
    assert_uuid(out["runId"])
    assert fake_model.requests == [] and await runs_in(rt, TARGET) == []


async def test_cross_agent_send_refused_before_any_lookup(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await make_runtime()
    out = await send(rt, {"sessionKey": OTHER, "message": "hi"}, key=MAIN)
    assert out == {
        "runId": out["runId"],
        "status": "forbidden",
        "sessionKey": OTHER,
        "error": "Agent-to-agent messaging is disabled. Set "
        "tools.agentToAgent.enabled=true to allow cross-agent sends.",
    }
    out = await send(rt, {"label": "x", "agentId": "Other", "message": "hi"}, key=MAIN)
    assert out["status"] == "forbidden" and out["error"].startswith(
        "Agent-to-agent messaging is disabled."
    )
    assert "sessionKey" not in out
    assert await rt.store.get_session(OTHER) is None and fake_model.requests == []

    rt = await make_runtime({"tools": {"agentToAgent": {"enabled": True, "allow": ["main"]}}})
    out = await send(rt, {"sessionKey": OTHER, "message": "hi"}, key=MAIN)
    assert out["status"] == "forbidden"
    assert out["error"] == "Agent-to-agent messaging denied by tools.agentToAgent.allow."


async def test_cross_agent_send_allowed_by_policy(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await make_runtime(
        {"tools": {"agentToAgent": {"enabled": True, "allow": ["main", "oth*"]}}, **NO_A2A}
    )
    out = await send(rt, {"sessionKey": OTHER, "message": "ping", "timeoutSeconds": 10}, key=MAIN)
    assert out["status"] == "ok" and out["reply"] == "echo: ping"
    assert out["sessionKey"] == OTHER
    await a2a_done(rt)


async def test_sandboxed_requester_reaches_only_its_children(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await make_runtime({"agents": {"defaults": {"sandbox": {"mode": "all"}}}, **NO_A2A})
    child = "agent:main:subagent:0c4f3c2e-8d0b-4a43-9d43-1d6d3f3f9d7b"
    await rt.services.ensure_session(child, spawned_by=MAIN, label="kid")
    await rt.services.ensure_session(TARGET, label="stranger")
    ctx = await requester(rt, MAIN)
    assert ctx.sandboxed

    out = await send(rt, {"sessionKey": TARGET, "message": "hi"}, key=MAIN)
    assert out["status"] == "forbidden" and out["sessionKey"] == TARGET
    assert out["error"] == f"Session not visible from this sandboxed agent session: {TARGET}"
    out = await send(rt, {"label": "x", "agentId": "other", "message": "hi"}, key=MAIN)
    assert out["error"] == "Sandboxed sessions_send label lookup is limited to this agent"
    out = await send(rt, {"label": "stranger", "message": "hi"}, key=MAIN)
    assert out["status"] == "forbidden"
    assert out["error"] == "Session not visible from this sandboxed agent session: label=stranger"
    assert fake_model.requests == []

    out = await send(rt, {"label": "kid", "message": "hi", "timeoutSeconds": 10}, key=MAIN)
    assert out["status"] == "ok" and out["sessionKey"] == child and out["reply"] == "echo: hi"
    await a2a_done(rt)


async def test_send_by_label(make_runtime: RuntimeFactory, fake_model: FakeModelServer) -> None:
    rt = await make_runtime(NO_A2A)
    labelled = "agent:main:test-labeled-session"
    await rt.services.ensure_session(labelled)
    await rt.store.set_label(labelled, "my-test-worker")
    out = await send(rt, {"label": "my-test-worker", "message": "job", "timeoutSeconds": 5})
    assert out["status"] == "ok" and out["sessionKey"] == labelled
    assert [m.plain_text() for m in await runs_in(rt, labelled)] == ["job"]
    out = await send(rt, {"label": "nonexistent-label", "message": "job"})
    assert out["status"] == "error"
    assert out["error"] == "No session found with label: nonexistent-label"
    assert_uuid(out["runId"])
    for key in ("agent:main:w1", "agent:main:w2"):
        await rt.services.ensure_session(key, label="worker")
    out = await send(rt, {"label": "worker", "message": "job"})
    assert out["status"] == "error"
    assert (
        out["error"] == "Multiple sessions found with label: worker (agent:main:w2, agent:main:w1)"
        or out["error"]
        == "Multiple sessions found with label: worker (agent:main:w1, agent:main:w2)"
    )
    await a2a_done(rt)
