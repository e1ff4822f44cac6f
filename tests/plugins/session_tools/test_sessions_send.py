"""`sessions_send`: validation order and texts, statuses, limits (R2.3, R3.1–R3.2, D5, D8).

Agents are the fake model: a responder scripts each session by the `Session: <key>` line of the
system prompt. "Nothing started" is asserted on the fake's requests and the store's transcripts.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
import uuid
from typing import Any

import pytest

from core.engine.runs import RunRequest
from core.model.errors import ToolInputError
from core.runtime import Runtime
from core.store import TranscriptMessage
from plugins.session_tools.reply_text import reply_of
from tests.conftest import RuntimeFactory
from tests.fakes.model import (
    FakeModelServer,
    RequestJSON,
    delay,
    error,
    last_message,
    last_user_text,
    system_text,
    text,
    tool_call,
    tool_results,
)

MAIN = "agent:main:main"
REQ = "agent:main:discord:group:req"
TARGET = "agent:main:discord:group:target"
OTHER = "agent:other:main"
NO_A2A = {"session": {"agentToAgent": {"maxPingPongTurns": 0}}}

# ---- helpers shared with test_a2a ------------------------------------------------------------


def session_of(req: RequestJSON) -> str:
    """The session a fake-model request belongs to (from the base system prompt)."""
    found = re.search(r"Session: (\S+) \(", system_text(req))
    return found.group(1) if found else ""


def is_announce(req: RequestJSON) -> bool:
    return "Agent-to-agent announce step:" in system_text(req)


def is_reply_step(req: RequestJSON) -> bool:
    return "Agent-to-agent reply step:" in system_text(req)


async def requester(rt: Runtime, key: str = REQ, **fields: Any) -> Any:
    """A requester session with a chat route, and its tool context."""
    if "discord:group" in key:
        chat = key.rsplit(":", 1)[1]
        fields = {
            "channel": "discord",
            "chat_type": "group",
            "last_channel": "discord",
            "last_to": f"channel:{chat}",
            **fields,
        }
    entry = await rt.services.ensure_session(key, **fields)
    return rt.services.context_for(entry)


async def send(
    rt: Runtime, args: dict[str, Any], key: str = REQ, **ctx_changes: Any
) -> dict[str, Any]:
    ctx = await requester(rt, key)
    if ctx_changes:
        ctx = dataclasses.replace(ctx, **ctx_changes)
    return await rt.tools.invoke(rt.tool_env, "sessions_send", args, ctx)


async def runs_in(rt: Runtime, key: str) -> list[TranscriptMessage]:
    """The user message of every run in a session (each run stores its input with its id)."""
    entry = await rt.store.get_session(key)
    if entry is None:
        return []
    return [m for m in await rt.store.history(entry.session_id) if m.role == "user" and m.run_id]


async def a2a_done(rt: Runtime, timeout: float = 20.0) -> None:
    """Wait until no background reply-back flow is left (flows may start further flows)."""
    async with asyncio.timeout(timeout):
        while flows := rt.background.named("run_a2a_flow"):
            await asyncio.gather(*flows)


def assert_uuid(value: object) -> None:
    assert isinstance(value, str)
    uuid.UUID(value)


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


# ---- statuses --------------------------------------------------------------------------------


async def test_fire_and_forget_returns_accepted_with_the_run_id(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await make_runtime(NO_A2A)
    for timeout in (0, -5, 0.9):
        out = await send(rt, {"sessionKey": "main", "message": "note", "timeoutSeconds": timeout})
        assert out == {
            "runId": out["runId"],
            "status": "accepted",
            "sessionKey": "main",
            "delivery": {"status": "pending", "mode": "announce"},
        }
        run = await rt.store.get_run(out["runId"])
        assert run is not None and run.session_key == MAIN and run.lane == "nested"
        assert not run.deliver
        assert (await rt.runs.wait(out["runId"], 10)).status == "ok"
    await a2a_done(rt)


async def test_ok_carries_the_reply_and_the_message_context(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await make_runtime(NO_A2A)
    fake_model.set_responder(lambda req: text("done") if session_of(req) == MAIN else None)
    # A non-numeric timeout means the default wait (30 s), not an error.
    out = await send(rt, {"sessionKey": "main", "message": "do it", "timeoutSeconds": "soon"})
    assert out == {
        "runId": out["runId"],
        "status": "ok",
        "reply": "done",
        "sessionKey": "main",
        "delivery": {"status": "pending", "mode": "announce"},
    }
    prompt = system_text(fake_model.requests[0])
    assert (
        "Agent-to-agent message context:\n"
        f"Agent 1 (requester) session: {REQ}.\n"
        "Agent 1 (requester) channel: discord.\n"
        "Agent 2 (target) session: main."
    ) in prompt
    assert last_user_text(fake_model.requests[0]) == "do it"
    run = await rt.store.get_run(out["runId"])
    assert run is not None and run.meta is not None and run.meta["hops"] == 1
    await a2a_done(rt)


async def test_requester_without_channel_has_no_channel_line(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await make_runtime(NO_A2A)
    out = await send(
        rt, {"sessionKey": TARGET, "message": "x", "timeoutSeconds": 5}, key=MAIN, via="http"
    )
    assert out["status"] == "ok"
    prompt = system_text(fake_model.requests[0])
    assert f"Agent 1 (requester) session: {MAIN}." in prompt
    assert "Agent 1 (requester) channel:" not in prompt
    await a2a_done(rt)


async def test_reply_strips_thinking(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await make_runtime(NO_A2A)
    fake_model.script(text("Hi <think>secret</think>there"))
    out = await send(rt, {"sessionKey": TARGET, "message": "x", "timeoutSeconds": 5})
    assert out["reply"] == "Hi there"
    await a2a_done(rt)


def test_reply_extraction_rules() -> None:
    def assistant(*texts: str) -> TranscriptMessage:
        return TranscriptMessage("assistant", [{"type": "text", "text": t} for t in texts], 0)

    assert reply_of([assistant("Hi ", "<think>secret</think>there")]) == "Hi there"
    assert reply_of([assistant("a"), TranscriptMessage.text("user", "later", 0)]) is None
    assert reply_of([assistant("<thinking>only</thinking>", "  ")]) is None
    assert reply_of([assistant("[Tool Call: read (ID: c1)]done")]) == "done"
    assert reply_of([]) is None


async def test_slow_target_times_out_and_the_run_still_finishes(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await make_runtime()
    fake_model.script(delay(1.5, text("late")))
    out = await send(rt, {"sessionKey": TARGET, "message": "x", "timeoutSeconds": 1.9})
    assert out == {"runId": out["runId"], "status": "timeout", "sessionKey": TARGET}
    # The wait is server-side and persisted: a later wait on the same id gets the end.
    assert (await rt.runs.wait(out["runId"], 10)).status == "ok"
    assert not rt.background.named("run_a2a_flow")
    assert len(fake_model.requests) == 1


async def test_failed_target_run_is_an_error(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await make_runtime()
    fake_model.script(error(400, "boom"))
    out = await send(rt, {"sessionKey": TARGET, "message": "x", "timeoutSeconds": 5})
    # D12: the provider's body ("boom") stays in the log, callers get the public text
    assert out["status"] == "error" and out["error"] == (
        "⚠️ The model provider failed (HTTP 400). Details are in the gateway log."
    )
    assert out["sessionKey"] == TARGET and "reply" not in out
    await a2a_done(rt)
    assert len(fake_model.requests) == 1


async def test_send_policy_deny_blocks_the_run(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await make_runtime()
    await rt.services.ensure_session(TARGET, send_policy="deny")
    out = await send(rt, {"sessionKey": TARGET, "message": "x", "timeoutSeconds": 5})
    assert out["status"] == "error" and out["error"] == "send blocked by session policy"
    assert out["sessionKey"] == TARGET
    assert_uuid(out["runId"])
    assert await rt.store.get_run(out["runId"]) is None
    assert await runs_in(rt, TARGET) == [] and fake_model.requests == []


# ---- decision D8 -----------------------------------------------------------------------------


async def test_seventh_send_in_a_minute_is_rate_limited(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await make_runtime(NO_A2A)
    for i in range(6):
        out = await send(rt, {"sessionKey": TARGET, "message": f"m{i}", "timeoutSeconds": 0})
        assert out["status"] == "accepted"
    out = await send(rt, {"sessionKey": TARGET, "message": "m6", "timeoutSeconds": 0})
    assert out["status"] == "error" and out["error"].startswith("rate limited: ")
    assert out["sessionKey"] == TARGET
    await a2a_done(rt)
    inputs = [m.plain_text() for m in await runs_in(rt, TARGET)]
    assert [t for t in inputs if t.startswith("m")] == [f"m{i}" for i in range(6)]
    # Another source session has its own budget.
    out = await send(
        rt, {"sessionKey": TARGET, "message": "from main", "timeoutSeconds": 0}, key=MAIN
    )
    assert out["status"] == "accepted"
    await a2a_done(rt)


async def test_hop_budget_stops_a_three_agent_loop(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await make_runtime(
        {
            "agents": {"list": [{"id": "a"}, {"id": "b"}, {"id": "c"}]},
            "tools": {"agentToAgent": {"enabled": True}, "sessions": {"hopBudget": 3}},
            **NO_A2A,
        }
    )
    nxt = {
        "agent:a:main": "agent:b:main",
        "agent:b:main": "agent:c:main",
        "agent:c:main": "agent:a:main",
    }

    def responder(req: RequestJSON) -> Any:
        if is_announce(req):
            return text("ANNOUNCE_SKIP")
        if last_message(req).get("role") == "tool":
            return text("relayed")
        return tool_call(
            "sessions_send",
            {"sessionKey": nxt[session_of(req)], "message": "pass it on", "timeoutSeconds": 0},
        )

    fake_model.set_responder(responder)
    out = await send(
        rt,
        {"sessionKey": "agent:b:main", "message": "start", "timeoutSeconds": 0},
        key="agent:a:main",
    )
    assert out["status"] == "accepted"

    def refused() -> list[dict[str, Any]]:
        found = []
        for req in fake_model.requests:
            for res in tool_results(req):
                payload = json.loads(res["content"])
                if payload.get("status") == "error":
                    found.append(payload)
        return found

    async with asyncio.timeout(20):
        while not refused():
            await fake_model.wait_for_requests(len(fake_model.requests) + 1, timeout=20)
    assert refused()[0]["error"].startswith("hop budget exhausted")
    # Hops 1..3 ran (b, c, a); the fourth send was refused and started nothing.
    primaries = [
        session_of(r)
        for r in fake_model.requests
        if "Agent-to-agent message context:" in system_text(r)
        and last_message(r).get("role") == "user"
    ]
    assert primaries == ["agent:b:main", "agent:c:main", "agent:a:main"]
    await a2a_done(rt)
    assert [m.plain_text() for m in await runs_in(rt, "agent:b:main")] == [
        "start",
        "Agent-to-agent announce step.",
    ]
