"""`sessions_spawn`: parameters, order of checks and result shapes (R2.4, R4.1–R4.5, D7, D8).

"Nothing started" is asserted on the store (no child session) and on the fake model (no
request). Announces are covered in tests/core/features/subagents.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
from typing import Any

import pytest

from core.engine.runs import RunRequest
from core.features.tools.availability import tool_names_for
from core.model.delivery_context import DeliveryContext
from core.model.errors import ToolInputError
from core.model.tool_context import ToolContext
from core.runtime import Runtime
from core.store import SessionQuery
from tests.conftest import RuntimeFactory
from tests.core.features.subagents.helpers import is_child, record_state
from tests.fakes.model import (
    FakeModelServer,
    RequestJSON,
    last_user_text,
    system_text,
    text,
    tool_call,
    tool_results,
)

UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"
ORIGIN = DeliveryContext(channel="discord", to="channel:req", account_id="acct")


async def ctx_for(rt: Runtime, key: str = "agent:main:main", **fields: Any) -> ToolContext:
    entry = await rt.services.ensure_session(key)
    return dataclasses.replace(rt.services.context_for(entry, origin=ORIGIN), **fields)


async def spawn(
    rt: Runtime, args: dict[str, Any], ctx: ToolContext | None = None
) -> dict[str, Any]:
    return await rt.tools.invoke(rt.tool_env, "sessions_spawn", args, ctx or await ctx_for(rt))


async def subagent_sessions(rt: Runtime) -> list[str]:
    return [e.key for e in await rt.store.list_sessions(SessionQuery()) if ":subagent:" in e.key]


def child_requests(fake: FakeModelServer) -> list[RequestJSON]:
    return [r for r in fake.requests if is_child(r)]


async def test_default_spawn_is_accepted_with_only_three_keys(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await make_runtime()
    out = await spawn(rt, {"task": "do thing"})
    assert set(out) == {"status", "childSessionKey", "runId"}
    assert out["status"] == "accepted"
    assert re.fullmatch(f"agent:main:subagent:{UUID}", out["childSessionKey"])
    await fake_model.wait_for_requests(1)
    assert last_user_text(fake_model.requests[0]) == "do thing"
    rec = await rt.store.get_subagent_run(out["runId"])
    assert rec is not None and rec.child_key == out["childSessionKey"]
    assert rec.requester_key == "agent:main:main" and rec.cleanup == "keep"
    assert rec.origin == ORIGIN
    assert rec.archive_at == rec.created_at + 60 * 60_000


async def test_task_is_required(make_runtime: RuntimeFactory) -> None:
    rt = await make_runtime()
    for args in ({}, {"task": "   "}):
        with pytest.raises(ToolInputError, match=r"^task required$"):
            await spawn(rt, args)
    assert await subagent_sessions(rt) == []


async def test_task_required_reaches_the_model_as_an_error_payload(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    fake_model.script(tool_call("sessions_spawn", {"label": "x"}), text("ok"))
    rt = await make_runtime()
    ctx = await ctx_for(rt)
    run = await rt.services.start_run(
        RunRequest(session_key=ctx.session_key, message="go", context=ctx)
    )
    await rt.runs.wait(run.id, 10)
    result = json.loads(tool_results(fake_model.requests[1])[0]["content"])
    assert result == {"status": "error", "tool": "sessions_spawn", "error": "task required"}


@pytest.mark.parametrize(
    "key", ["agent:main:SubAgent:xyz", "agent:main:subagent:abc", "subagent:abc"]
)
async def test_subagent_requester_is_forbidden(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer, key: str
) -> None:
    rt = await make_runtime()
    ctx = ToolContext(session_key=key, agent_id="main", origin=ORIGIN, role="owner")
    out = await spawn(rt, {"task": "x"}, ctx)
    assert out == {
        "status": "forbidden",
        "error": "sessions_spawn is not allowed from sub-agent sessions",
    }
    assert await subagent_sessions(rt) == [] and fake_model.requests == []


@pytest.mark.parametrize(
    ("allow", "agent_id", "suffix"),
    [
        (None, "beta", "(allowed: none)"),
        (["alpha"], "beta", "(allowed: alpha)"),
        (["alpha", " gamma "], "beta", "(allowed: alpha, gamma)"),
    ],
)
async def test_agent_not_in_allow_agents_is_forbidden(
    make_runtime: RuntimeFactory,
    fake_model: FakeModelServer,
    allow: list[str] | None,
    agent_id: str,
    suffix: str,
) -> None:
    main: dict[str, Any] = {"id": "main"}
    if allow is not None:
        main["subagents"] = {"allowAgents": allow}
    rt = await make_runtime({"agents": {"list": [main]}})
    out = await spawn(rt, {"task": "x", "agentId": agent_id})
    assert out == {
        "status": "forbidden",
        "error": f"agentId is not allowed for sessions_spawn {suffix}",
    }
    assert await subagent_sessions(rt) == [] and fake_model.requests == []


@pytest.mark.parametrize(
    ("allow", "agent_id", "prefix"),
    [
        (["beta"], "beta", "agent:beta:subagent:"),
        (["Research"], "RESEARCH", "agent:research:subagent:"),
        (["*"], "My Agent!", "agent:my-agent:subagent:"),
    ],
)
async def test_allowed_cross_agent_spawn(
    make_runtime: RuntimeFactory, allow: list[str], agent_id: str, prefix: str
) -> None:
    # tools.agentToAgent stays disabled: it is not consulted for spawning
    rt = await make_runtime(
        {"agents": {"list": [{"id": "main", "subagents": {"allowAgents": allow}}]}}
    )
    out = await spawn(rt, {"task": "x", "agentId": agent_id})
    assert out["status"] == "accepted" and out["childSessionKey"].startswith(prefix)


async def test_same_agent_needs_no_allowlist(make_runtime: RuntimeFactory) -> None:
    rt = await make_runtime()
    ctx = await ctx_for(rt, "agent:research:main", agent_id="research")
    out = await spawn(rt, {"task": "x", "agentId": "Research"}, ctx)
    assert out["status"] == "accepted"
    assert out["childSessionKey"].startswith("agent:research:subagent:")


async def test_unknown_model_is_an_error_and_starts_nothing(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await make_runtime()
    for model in ("bad-model", "nope/model", " claude-haiku-4-5 "):
        out = await spawn(rt, {"task": "x", "model": model})
        assert out == {"status": "error", "error": f"invalid model: {model.strip()}"}
    assert await subagent_sessions(rt) == [] and fake_model.requests == []


async def test_unknown_configured_default_model_is_an_error(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await make_runtime(
        {"agents": {"defaults": {"subagents": {"model": "minimax/MiniMax-M2.1"}}}}
    )
    out = await spawn(rt, {"task": "x"})
    assert out == {"status": "error", "error": "invalid model: minimax/MiniMax-M2.1"}
    assert fake_model.requests == []


async def test_explicit_model_is_applied_before_the_run(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await make_runtime()
    out = await spawn(rt, {"task": "x", "model": "fake/small-model"})
    assert out["modelApplied"] is True and "warning" not in out
    [req] = await fake_model.wait_for_requests(1)
    assert req["model"] == "small-model"
    entry = await rt.store.get_session(out["childSessionKey"])
    assert entry is not None and entry.model == "fake/small-model"


@pytest.mark.parametrize(
    ("extra", "requester", "expected"),
    [
        (
            {"agents": {"defaults": {"subagents": {"model": "fake/sub-default"}}}},
            "agent:main:main",
            "sub-default",
        ),
        (
            {
                "agents": {
                    "defaults": {"subagents": {"model": "fake/sub-default"}},
                    "list": [
                        {"id": "main"},
                        {"id": "research", "subagents": {"model": "fake/research-sub"}},
                    ],
                }
            },
            "agent:research:main",
            "research-sub",
        ),
        (
            {
                "agents": {
                    "defaults": {
                        "subagents": {"model": {"primary": "fake/a-b", "fallbacks": ["fake/c"]}}
                    }
                }
            },
            "agent:main:main",
            "a-b",
        ),
    ],
)
async def test_configured_subagent_model_precedence(
    make_runtime: RuntimeFactory,
    fake_model: FakeModelServer,
    extra: dict[str, Any],
    requester: str,
    expected: str,
) -> None:
    rt = await make_runtime(extra)
    ctx = await ctx_for(rt, requester, agent_id=requester.split(":")[1])
    out = await spawn(rt, {"task": "x"}, ctx)
    assert out["status"] == "accepted" and out["modelApplied"] is True
    [req] = await fake_model.wait_for_requests(1)
    assert req["model"] == expected


async def test_thinking_levels(make_runtime: RuntimeFactory, fake_model: FakeModelServer) -> None:
    rt = await make_runtime()
    out = await spawn(rt, {"task": "x", "thinking": "UltraThink"})
    assert out["status"] == "accepted"
    entry = await rt.store.get_session(out["childSessionKey"])
    assert entry is not None and entry.thinking_level == "high"
    before = await subagent_sessions(rt)
    for bad in ("banana", "xhigh"):
        out = await spawn(rt, {"task": "x", "thinking": bad})
        assert out == {
            "status": "error",
            "error": f'Invalid thinking level "{bad}". Use one '
            "of: off, minimal, low, medium, high.",
        }
    assert await subagent_sessions(rt) == before


async def test_hop_budget_is_enforced(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await make_runtime({"tools": {"sessions": {"hopBudget": 2}}})
    ctx = await ctx_for(rt, hops=2)
    out = await spawn(rt, {"task": "x"}, ctx)
    assert out["status"] == "error" and out["error"].startswith("hop budget exhausted")
    assert await subagent_sessions(rt) == [] and fake_model.requests == []
    out = await spawn(rt, {"task": "x"}, await ctx_for(rt, hops=1))
    assert out["status"] == "accepted"
    run = await rt.store.get_run(out["runId"])
    assert run is not None and run.meta is not None and run.meta["hops"] == 2
    assert run.meta["traceId"] == ctx.trace_id or run.meta["traceId"]


async def test_send_policy_deny_blocks_the_spawn(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await make_runtime({"session": {"sendPolicy": {"default": "deny"}}})
    out = await spawn(rt, {"task": "x"})
    assert out["status"] == "error" and out["error"] == "send blocked by session policy"
    assert out["childSessionKey"].startswith("agent:main:subagent:")
    assert await subagent_sessions(rt) == [] and fake_model.requests == []


async def test_spawned_child_is_listed_for_its_sandboxed_parent(
    make_runtime: RuntimeFactory,
) -> None:
    rt = await make_runtime({"agents": {"defaults": {"sandbox": {"mode": "all"}}}})
    ctx = await ctx_for(rt)
    assert ctx.sandboxed
    out = await spawn(rt, {"task": "x", "label": "kid"}, ctx)
    listed = await rt.tools.invoke(rt.tool_env, "sessions_list", {}, ctx)
    assert [r["key"] for r in listed["sessions"]] == [out["childSessionKey"]]
    entries = await rt.store.list_sessions(SessionQuery(spawned_by="agent:main:main"))
    assert [e.key for e in entries] == [out["childSessionKey"]]


async def test_subagent_sessions_have_no_session_tools(make_runtime: RuntimeFactory) -> None:
    rt = await make_runtime()
    child = rt.keys.subagent_key("main")
    names = tool_names_for(rt.config, rt.tools, child, "main")
    for denied in (
        "sessions_list",
        "sessions_history",
        "sessions_search",
        "session_status",
        "sessions_send",
        "sessions_spawn",
        "agents_list",
        "subagents",
        "sessions_yield",
    ):
        assert denied not in names
    assert "sessions_spawn" in tool_names_for(rt.config, rt.tools, "agent:main:main", "main")


async def test_spawn_does_not_wait_for_the_child(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    gate = asyncio.Event()

    async def responder(req: RequestJSON) -> Any:
        if "# Subagent Context" in system_text(req):
            await gate.wait()
        return text("done")

    fake_model.set_responder(responder)
    rt = await make_runtime()
    out = await spawn(rt, {"task": "x"})
    assert out["status"] == "accepted"
    await fake_model.wait_for_requests(1)
    run = await rt.store.get_run(out["runId"])
    assert run is not None and run.status == "running"
    gate.set()
    await record_state(rt, out["runId"], ("done",))
