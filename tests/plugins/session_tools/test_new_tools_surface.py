"""Issue 22's common rules for today's session tools (`sessions_search`, `session_status`,
`subagents`, `sessions_yield`, `sessions_send` modes), each on SQLite and PostgreSQL: offered
over `/tools/invoke` and the MCP server with the same answers, named in the OpenAPI document's
tool list, taken away by the tool policy (an agent's deny list, the `minimal` profile) on every
path, and narrowed by the sandbox (D61, D66-D70).
"""

from __future__ import annotations

from typing import Any

import httpx2
from aiohttp.test_utils import TestClient, TestServer
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from core.edge.http.server import build_app
from core.features.tools.availability import tool_names_for
from core.runtime import Runtime
from core.store import TranscriptMessage, now_ms
from tests.conftest import RuntimeFactory
from tests.fakes.model import FakeModelServer

AUTH = {"Authorization": "Bearer test-token"}
OPS = "agent:main:ops"
NEW_TOOLS = ("sessions_search", "session_status", "subagents", "sessions_yield", "sessions_send")
NOTHING = "No sub-agent is running; nothing to wait for."
CALLS: dict[str, dict[str, Any]] = {
    "sessions_search": {"query": "launch"},
    "session_status": {"sessionKey": OPS},
    "subagents": {"action": "list"},
    "sessions_yield": {},
    "sessions_send": {"sessionKey": OPS, "message": "fyi", "mode": "notify"},
}


def expected(tool: str, out: dict[str, Any]) -> None:
    """The documented answer of each call in CALLS (D66-D70)."""
    if tool == "sessions_search":
        assert out["count"] >= 1 and out["results"][0]["sessionKey"] == OPS, out
    elif tool == "session_status":
        assert (out["sessionKey"], out["status"], out["queued"]) == (OPS, "idle", 0), out
    elif tool == "subagents":
        assert out == {"count": 0, "subagents": []}
    elif tool == "sessions_yield":
        assert out == {"status": "error", "error": NOTHING}
    else:
        assert out == {"status": "ok", "mode": "notify"}


async def seeded(start: RuntimeFactory, extra: dict[str, Any] | None = None) -> Runtime:
    rt = await start(extra)
    entry = await rt.services.ensure_session(OPS)
    said = TranscriptMessage.text("user", "the launch date is friday", now_ms())
    await rt.store.append_messages(entry, [said])
    return rt


def mcp_client(url: str) -> Client:
    http = httpx2.AsyncClient(headers=AUTH, timeout=30)
    return Client(streamable_http_client(url, http_client=http), read_timeout_seconds=30)


async def test_each_over_tools_invoke_and_mcp(
    start: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await seeded(start)
    async with TestClient(TestServer(build_app(rt, "test-token", []))) as c:
        for tool in NEW_TOOLS:
            body = {"tool": tool, "args": CALLS[tool], "sessionKey": "main"}
            resp = await c.post("/tools/invoke", json=body, headers=AUTH)
            assert resp.status == 200, (tool, await resp.text())
            answer = await resp.json()
            assert answer["ok"] is True
            expected(tool, answer["result"]["details"])
        async with mcp_client(str(c.make_url("/mcp"))) as mcp:
            listed = {t.name for t in (await mcp.list_tools()).tools}
            assert set(NEW_TOOLS) <= listed
            for tool in NEW_TOOLS:
                result = await mcp.call_tool(tool, CALLS[tool])
                assert not result.is_error, (tool, result.content)
                expected(tool, dict(result.structured_content or {}))
        spec = await (await c.get("/openapi.json")).json()
    body = spec["paths"]["/tools/invoke"]["post"]["requestBody"]["content"]["application/json"]
    assert set(NEW_TOOLS) <= set(body["schema"]["properties"]["tool"]["examples"])
    assert fake_model.requests == []  # none of these calls starts a turn


async def test_the_tool_policy_takes_each_away(
    start: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    agents = {"list": [{"id": "main", "default": True, "tools": {"deny": list(NEW_TOOLS)}}]}
    rt = await seeded(start, {"agents": agents})
    assert not set(NEW_TOOLS) & set(tool_names_for(rt.config, rt.tools, OPS, "main"))
    async with TestClient(TestServer(build_app(rt, "test-token", []))) as c:
        for tool in NEW_TOOLS:
            body = {"tool": tool, "args": CALLS[tool], "sessionKey": "main"}
            resp = await c.post("/tools/invoke", json=body, headers=AUTH)
            assert resp.status == 404, tool
            assert await resp.json() == {
                "ok": False,
                "error": {"type": "not_found", "message": f"Tool not available: {tool}"},
            }
        async with mcp_client(str(c.make_url("/mcp"))) as mcp:
            assert not set(NEW_TOOLS) & {t.name for t in (await mcp.list_tools()).tools}
            refused = await mcp.call_tool("sessions_yield", {})
            assert refused.is_error and "Tool not available: sessions_yield" in str(refused.content)
    assert set(NEW_TOOLS) <= set(rt.tools.profile_members("messaging") or ())
    assert not set(NEW_TOOLS) & set(rt.tools.profile_members("minimal") or ())


async def test_the_sandbox_narrows_each(start: RuntimeFactory, fake_model: FakeModelServer) -> None:
    rt = await seeded(start, {"agents": {"defaults": {"sandbox": {"mode": "all"}}}})
    entry = await rt.services.ensure_session("agent:main:main")
    ctx = rt.services.context_for(entry)
    assert ctx.sandboxed  # an agent's call; HTTP and MCP calls are never sandboxed (D9)
    hidden = f"Session not visible from this sandboxed agent session: {OPS}"

    async def call(tool: str, **args: Any) -> dict[str, Any]:
        return await rt.tools.invoke(rt.tool_env, tool, args, ctx)

    assert await call("sessions_search", query="launch") == {"count": 0, "results": []}
    assert await call("sessions_search", query="launch", sessionKey=OPS) == {
        "status": "forbidden",
        "error": hidden,
    }
    status = await call("session_status", sessionKey=OPS)
    assert (status["status"], status["error"]) == ("forbidden", hidden)
    assert (await call("session_status"))["sessionKey"] == "main"  # its own, always (D113)
    sent = await call("sessions_send", sessionKey=OPS, message="fyi", mode="notify")
    assert (sent["status"], sent["error"]) == ("forbidden", hidden)
    assert await call("subagents") == {"count": 0, "subagents": []}
    assert await call("sessions_yield") == {"status": "error", "error": NOTHING}
    assert fake_model.requests == []
