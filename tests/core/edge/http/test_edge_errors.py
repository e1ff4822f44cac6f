"""The HTTP edge (D12) on a real aiohttp server: JSON 404 and 405 answers (OpenAI's shape under
/v1), a label held by another session as a 409, and an unexpected error answered once: a JSON
500 before a response starts, a cut connection after."""

from __future__ import annotations

import pytest
from aiohttp.test_utils import TestClient, TestServer

from core.runtime import Runtime
from tests.conftest import Client, RuntimeFactory
from tests.core.edge.http.edge_helpers import AUTH

# --- JSON 404 / 405 ------------------------------------------------------------------------


async def test_unknown_paths_and_methods_answer_json(client: tuple[Client, Runtime]) -> None:
    c, _ = client
    resp = await c.get("/nowhere", headers=AUTH)
    assert resp.status == 404
    assert await resp.json() == {"error": {"message": "Not Found", "type": "not_found"}}
    resp = await c.delete("/api/pairing/telegram/CODE/approve", headers=AUTH)
    assert resp.status == 405 and resp.headers["Allow"] == "POST"
    assert await resp.json() == {
        "error": {"message": "Method Not Allowed", "type": "method_not_allowed"}
    }
    # Under /v1 the same refusal comes in OpenAI's error shape (D14).
    resp = await c.delete("/v1/chat/completions", headers=AUTH)
    assert resp.status == 405 and resp.headers["Allow"] == "POST"
    assert (await resp.json())["error"]["type"] == "invalid_request_error"


async def test_a_label_held_by_another_session_is_409(client: tuple[Client, Runtime]) -> None:
    """Found by schemathesis: a schema-valid patch is not a bad request; it conflicts."""
    c, rt = client
    for key in ("agent:main:a", "agent:main:b"):
        await rt.services.ensure_session(key)
    resp = await c.patch("/api/sessions/agent%3Amain%3Aa", json={"label": "home"}, headers=AUTH)
    assert resp.status == 200
    resp = await c.patch("/api/sessions/agent%3Amain%3Ab", json={"label": "home"}, headers=AUTH)
    assert resp.status == 409
    assert (await resp.json())["error"] == {
        "message": "label already in use: home",
        "type": "conflict",
    }


async def test_a_failure_inside_a_started_stream_is_not_answered_twice(
    make_runtime: RuntimeFactory,
) -> None:
    """Unexpected errors are a JSON 500 before a response starts, and left to aiohttp (which
    closes the connection) once a stream has begun."""
    from aiohttp import web

    from core.edge.http.edge import install_edge

    async def early(request: web.Request) -> web.StreamResponse:
        raise RuntimeError("boom")

    async def late(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse()
        await resp.prepare(request)
        await resp.write(b"partial")
        raise RuntimeError("boom")

    app = web.Application()
    install_edge(app, 1000, 5)
    app.router.add_get("/early", early)
    app.router.add_get("/late", late)
    async with TestClient(TestServer(app)) as c:
        resp = await c.get("/early")
        assert resp.status == 500
        assert (await resp.json())["error"]["type"] == "internal_error"
        resp = await c.get("/late")
        assert resp.status == 200
        with pytest.raises(Exception):  # noqa: B017 - the stream is cut, however aiohttp says it
            await resp.read()
