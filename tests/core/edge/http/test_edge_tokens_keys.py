"""The HTTP edge (D12) on a real aiohttp server: bearer tokens compared as UTF-8 bytes, and
invalid session keys refused with a 400 on every route."""

from __future__ import annotations

import pytest
from aiohttp.test_utils import TestClient, TestServer

from core.edge.http.server import build_app
from core.runtime import Runtime
from tests.conftest import Client, RuntimeFactory
from tests.core.edge.http.edge_helpers import AUTH, is_invalid_request, raw_request, status_of

BAD_KEYS = [":::", ":", " : : ", "x" * 300, "agent:main:" + "y" * 250]

# --- item 1: bearer tokens -----------------------------------------------------------------


async def test_non_ascii_tokens_are_compared_as_utf8_bytes(make_runtime: RuntimeFactory) -> None:
    rt = await make_runtime()
    secret = "tökén-秘密"
    async with TestClient(TestServer(build_app(rt, secret, []))) as c:

        def head(token: bytes) -> bytes:
            return (
                b"GET /api/deliveries HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                b"Authorization: Bearer " + token + b"\r\n\r\n"
            )

        assert status_of(await raw_request(c, head(secret.encode()))) == 200
        assert status_of(await raw_request(c, head("tökén-秘".encode()))) == 401
        assert status_of(await raw_request(c, head(b"\xff\xfe"))) == 401
        assert status_of(await raw_request(c, head(b"test-token"))) == 401
        # the right token, but `?token=` is for the web chat's page and socket only (D81)
        resp = await c.get("/api/deliveries?token=t%C3%B6k%C3%A9n-%E7%A7%98%E5%AF%86")
        assert resp.status == 401
        for wrong in ("t%C3%B6k", "%FF%FE", "plain"):
            resp = await c.get(f"/api/deliveries?token={wrong}")
            assert resp.status == 401
            assert await resp.json() == {
                "error": {"message": "Unauthorized", "type": "unauthorized"}
            }


async def test_a_non_ascii_token_against_an_ascii_secret_is_401(
    client: tuple[Client, Runtime],
) -> None:
    c, _ = client
    head = (
        "POST /tools/invoke HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        "Content-Type: application/json\r\nContent-Length: 2\r\n"
        "Authorization: Bearer tëst-token\r\n\r\n"
    ).encode()
    assert status_of(await raw_request(c, head, b"{}")) == 401
    resp = await c.post("/tools/invoke?token=%E2%9C%93", json={"tool": "sessions_list"})
    assert resp.status == 401


# --- item 2: session keys ------------------------------------------------------------------


@pytest.mark.parametrize("bad", BAD_KEYS)
async def test_invalid_session_keys_are_400_on_every_route(
    client: tuple[Client, Runtime], bad: str
) -> None:
    c, rt = client
    from urllib.parse import quote

    resp = await c.post(
        "/tools/invoke", json={"tool": "sessions_list", "sessionKey": bad}, headers=AUTH
    )
    assert resp.status == 400 and is_invalid_request(await resp.json(), "invalid session key")
    for method in ("GET", "PATCH"):
        resp = await c.request(
            method, f"/api/sessions/{quote(bad, safe='')}", json={"label": "x"}, headers=AUTH
        )
        assert resp.status == 400, (method, await resp.text())
        assert is_invalid_request(await resp.json(), "invalid session key")
    resp = await c.get(f"/api/deliveries?session={quote(bad, safe='')}", headers=AUTH)
    assert resp.status == 400 and is_invalid_request(await resp.json(), "invalid session key")
    resp = await c.post(
        "/v1/chat/completions",
        headers={**AUTH, "x-crosstalk-session-key": bad},
        json={"messages": [{"role": "user", "content": "hi"}]},
    )
    assert resp.status == 400 and is_invalid_request(await resp.json(), "invalid session key")
    assert await rt.store.find_sessions("y", spawned_by=None) == []


async def test_a_blank_path_key_is_400(client: tuple[Client, Runtime]) -> None:
    c, _ = client
    resp = await c.get("/api/sessions/%20", headers=AUTH)
    assert resp.status == 400 and is_invalid_request(await resp.json(), "invalid session key")


async def test_a_bad_key_inside_tool_args_is_a_tool_payload(
    client: tuple[Client, Runtime],
) -> None:
    c, _ = client
    resp = await c.post(
        "/tools/invoke",
        headers=AUTH,
        json={"tool": "sessions_history", "args": {"sessionKey": "x" * 300}},
    )
    body = await resp.json()
    assert resp.status == 200 and body["result"]["details"]["status"] == "error"
    assert body["result"]["details"]["error"].startswith("invalid session key")
