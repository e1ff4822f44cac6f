"""The HTTP API on a real aiohttp server: /tools/invoke shapes (reference [7]), sessions.patch,
the delivery log, chat completions under a deny policy, /healthz and /openapi.json."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from core.edge.http.server import build_app
from core.runtime import Runtime
from tests.conftest import Client, RuntimeFactory

AUTH = {"Authorization": "Bearer test-token"}


@pytest.fixture
async def client(make_runtime: RuntimeFactory) -> AsyncIterator[tuple[Client, Runtime]]:
    rt = await make_runtime(
        {"agents": {"list": [{"id": "main", "default": True, "tools": {"deny": ["agents_list"]}}]}}
    )
    async with TestClient(TestServer(build_app(rt, "test-token", []))) as c:
        yield c, rt


async def _invoke(c: Client, body: Any, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    resp = await c.post(
        "/tools/invoke", json=body, headers=headers if headers is not None else AUTH
    )
    return resp.status, await resp.json(content_type=None)


async def test_invoke_success_shape(client: tuple[Client, Runtime]) -> None:
    c, _ = client
    status, body = await _invoke(
        c, {"tool": "sessions_list", "action": "json", "args": {}, "sessionKey": "main"}
    )
    assert status == 200 and body["ok"] is True
    assert isinstance(body["result"]["details"]["count"], int)
    assert body["result"]["content"][0]["type"] == "text"


async def test_invoke_errors_have_the_documented_shapes(client: tuple[Client, Runtime]) -> None:
    c, _ = client
    resp = await c.get("/tools/invoke", headers=AUTH)
    assert resp.status == 405 and resp.headers["Allow"] == "POST"
    assert await resp.text() == "Method Not Allowed"
    assert await _invoke(c, {"tool": "sessions_list"}, headers={}) == (
        401,
        {"error": {"message": "Unauthorized", "type": "unauthorized"}},
    )
    assert await _invoke(c, {}) == (
        400,
        {"error": {"message": "tools.invoke requires body.tool", "type": "invalid_request_error"}},
    )
    resp = await c.post("/tools/invoke", data="{not json", headers=AUTH)
    assert resp.status == 400
    assert (await resp.json())["error"]["type"] == "invalid_request_error"
    resp = await c.post("/tools/invoke", data=b"x" * (2 * 1024 * 1024 + 10), headers=AUTH)
    assert resp.status == 400
    assert (await resp.json())["error"]["message"] == "payload too large"
    assert await _invoke(c, {"tool": "agents_list"}) == (
        404,
        {"ok": False, "error": {"type": "not_found", "message": "Tool not available: agents_list"}},
    )
    assert await _invoke(c, {"tool": "sessions_history", "args": {}}) == (
        400,
        {"ok": False, "error": {"type": "tool_error", "message": "sessionKey required"}},
    )
    status, _ = await _invoke(c, {"tool": "sessions_list", "sessionKey": "agent:main:subagent:x"})
    assert status == 404


async def test_sessions_patch_get_and_delivery_log(client: tuple[Client, Runtime]) -> None:
    c, rt = client
    resp = await c.patch("/api/sessions/agent:main:ops", json={"sendPolicy": "deny"}, headers=AUTH)
    assert resp.status == 404  # a session nothing made yet
    assert (await resp.json())["error"]["message"] == "Unknown session: agent:main:ops"
    resp = await c.get("/api/sessions/agent:ghost:main", headers=AUTH)
    assert resp.status == 404  # no such agent configured: its main session is not made
    assert await rt.store.get_session("agent:ghost:main") is None
    resp = await c.patch(
        "/api/sessions/main", json={"sendPolicy": "deny", "label": "home"}, headers=AUTH
    )
    body = await resp.json()
    assert resp.status == 200 and body["key"] == "agent:main:main"
    assert body["entry"]["sendPolicy"] == "deny" and body["entry"]["label"] == "home"
    resp = await c.patch(
        "/api/sessions/agent%3Amain%3Amain", json={"sendPolicy": "maybe"}, headers=AUTH
    )
    assert resp.status == 400
    assert (await resp.json())["error"]["message"].startswith(
        "invalid sessions.patch params: sendPolicy"
    )
    resp = await c.patch("/api/sessions/main", json={}, headers=AUTH)
    assert resp.status == 400  # nothing to change
    assert (await resp.json())["error"]["message"] == (
        "sessions.patch requires at least one of: sendPolicy, label, model"
    )
    resp = await c.patch("/api/sessions/main", json={"sendPolicy": None}, headers=AUTH)
    assert "sendPolicy" not in (await resp.json())["entry"]
    resp = await c.get("/api/sessions/agent:main:main", headers=AUTH)
    assert (await resp.json())["entry"]["label"] == "home"

    await rt.store.update_session("agent:main:main", send_policy="deny")
    from core.engine.outbound.delivery import Outbound

    await rt.gate.deliver(Outbound("hidden", "notice", "agent:main:main"))
    resp = await c.get("/api/deliveries?session=main&outcome=suppressed_by_policy", headers=AUTH)
    rows = (await resp.json())["deliveries"]
    assert [(r["text"], r["reason"]) for r in rows] == [("hidden", "session override")]
    assert (await c.get("/api/deliveries")).status == 401


async def test_a_configured_agents_main_session_answers_on_a_fresh_state(
    client: tuple[Client, Runtime],
) -> None:
    """D199: `sessions_list` shows `main` before anything touched it, so patch and get find it
    (`crosstalk sessions patch agent:main:main --send-policy off` answered "Unknown session")."""
    c, rt = client
    assert await rt.store.get_session("agent:main:main") is None
    resp = await c.patch("/api/sessions/agent:main:main", json={"sendPolicy": "deny"}, headers=AUTH)
    assert resp.status == 200 and (await resp.json())["entry"]["sendPolicy"] == "deny"
    assert await rt.store.delete_session("agent:main:main")
    resp = await c.get("/api/sessions/main", headers=AUTH)
    assert resp.status == 200 and (await resp.json())["entry"]["sessionKey"] == "agent:main:main"


async def test_chat_completion_into_a_denied_session_is_refused(
    client: tuple[Client, Runtime],
) -> None:
    c, rt = client
    await rt.services.ensure_session("agent:main:ops")
    await rt.store.update_session("agent:main:ops", send_policy="deny")
    resp = await c.post(
        "/v1/chat/completions",
        headers={**AUTH, "x-crosstalk-session-key": "agent:main:ops"},
        json={"messages": [{"role": "user", "content": "hi"}]},
    )
    assert resp.status == 403
    assert (await resp.json())["error"]["message"] == "send blocked by session policy"
    resp = await c.post("/v1/chat/completions", headers=AUTH, json={"messages": []})
    assert resp.status == 400


async def test_healthz_and_openapi(client: tuple[Client, Runtime]) -> None:
    c, _ = client
    resp = await c.get("/healthz")
    assert resp.status == 200 and (await resp.json())["ok"] is True
    spec = await (await c.get("/openapi.json")).json()
    assert {
        "/tools/invoke",
        "/v1/chat/completions",
        "/api/sessions/{key}",
        "/v1/models",
        "/v1/models/{id}",
        "/v1/responses",
    } <= set(spec["paths"])


async def test_sessions_send_into_the_callers_own_session_over_http_waits_for_the_reply(
    client: tuple[Client, Runtime], fake_model: Any
) -> None:
    """No turn of the caller's session is waiting over HTTP, so the send waits: `ok`, reply."""
    from tests.fakes.model import text

    c, _ = client
    fake_model.script(text("the reply"))
    status, body = await _invoke(
        c,
        {
            "tool": "sessions_send",
            "sessionKey": "main",
            "args": {"sessionKey": "main", "message": "hello me", "timeoutSeconds": 30},
        },
    )
    assert status == 200, body
    details = body["result"]["details"]
    assert details["status"] == "ok" and details["reply"] == "the reply"
