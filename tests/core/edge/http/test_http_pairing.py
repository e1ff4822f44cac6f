"""The pairing routes' edges: auth, bad channels, unknown codes, OpenAPI; a full approval."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiohttp.test_utils import TestClient, TestServer

from core.api.testing import RecordingAdapter
from core.edge.http.server import build_app
from core.features.access.pairing import APPROVED_TEXT
from core.runtime import Runtime
from tests.conftest import Client, RuntimeFactory

AUTH = {"Authorization": "Bearer test-token"}


@pytest.fixture
async def client(
    make_runtime: RuntimeFactory,
) -> AsyncIterator[tuple[Client, Runtime, RecordingAdapter]]:
    adapter = RecordingAdapter("telegram")  # no telegram section: the D11 defaults apply
    rt = await make_runtime(adapters=[adapter])
    async with TestClient(TestServer(build_app(rt, "test-token", []))) as c:
        yield c, rt, adapter


async def test_routes_need_the_token_and_refuse_bad_input(
    client: tuple[Client, Runtime, RecordingAdapter],
) -> None:
    c, _, _ = client
    for method, path in (
        ("GET", "/api/pairing"),
        ("POST", "/api/pairing/telegram/ABCDEFGH/approve"),
        ("POST", "/api/pairing/telegram/ABCDEFGH/deny"),
        ("DELETE", "/api/pairing/telegram/approved/7"),
    ):
        resp = await c.request(method, path)
        assert resp.status == 401, path
    resp = await c.get("/api/pairing?channel=myspace", headers=AUTH)
    assert resp.status == 400
    assert (await resp.json())["error"]["message"] == "unknown channel: myspace"
    resp = await c.post("/api/pairing/myspace/ABCDEFGH/approve", headers=AUTH)
    assert resp.status == 404
    resp = await c.post("/api/pairing/telegram/ABCDEFGH/approve", headers=AUTH)
    assert resp.status == 404
    assert (await resp.json())["error"] == {
        "message": "No pending pairing request with code ABCDEFGH on telegram.",
        "type": "not_found",
    }
    resp = await c.delete("/api/pairing/telegram/approved/7", headers=AUTH)
    assert resp.status == 404
    spec = await (await c.get("/openapi.json")).json()
    assert {
        "/api/pairing",
        "/api/pairing/{channel}/{code}/approve",
        "/api/pairing/{channel}/{code}/deny",
        "/api/pairing/{channel}/approved/{userId}",
    } <= set(spec["paths"])


async def test_approve_over_http(client: tuple[Client, Runtime, RecordingAdapter]) -> None:
    c, rt, adapter = client
    await adapter.say("hello", chat_id="7", sender="7")
    [(_, text)] = adapter.sent
    code = text.rsplit(" ", 1)[1]
    listed = await (await c.get("/api/pairing?channel=telegram", headers=AUTH)).json()
    assert [r["code"] for r in listed["requests"]] == [code]
    resp = await c.post(f"/api/pairing/telegram/{code.lower()}/approve", headers=AUTH)
    assert (resp.status, await resp.json()) == (200, {"ok": True, "userId": "7"})
    assert adapter.texts()[-1] == APPROVED_TEXT
    listed = await (await c.get("/api/pairing", headers=AUTH)).json()
    assert listed["requests"] == []
    assert [(a["channel"], a["accountId"], a["userId"]) for a in listed["approved"]] == [
        ("telegram", "default", "7")
    ]
    await adapter.say("again", chat_id="7", sender="7")
    await adapter.wait_for("echo: again")
    resp = await c.delete("/api/pairing/telegram/approved/7", headers=AUTH)
    assert (resp.status, await resp.json()) == (200, {"ok": True, "userId": "7"})
    assert rt.access.refused("telegram", "default") == 1
