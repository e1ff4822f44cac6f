"""The HTTP edge (D12) on a real aiohttp server: tokens compared as UTF-8 bytes, invalid session
keys, malformed / deep / mistyped bodies, content types, the body limit read in full, the body
read timeout, and JSON 404/405 answers. Every case is a 4xx with the route's error shape."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import ClientSession
from aiohttp.test_utils import TestClient, TestServer

from core.edge.http.server import build_app
from core.runtime import Runtime
from tests.conftest import Client, RuntimeFactory

AUTH = {"Authorization": "Bearer test-token"}
BAD_KEYS = [":::", ":", " : : ", "x" * 300, "agent:main:" + "y" * 250]


@pytest.fixture
async def client(make_runtime: RuntimeFactory) -> AsyncIterator[tuple[Client, Runtime]]:
    rt = await make_runtime(
        {"gateway": {"maxBodyBytes": 4 * 1024 * 1024, "bodyTimeoutSeconds": 0.5}}
    )
    async with TestClient(TestServer(build_app(rt, "test-token", []))) as c:
        yield c, rt


def _is_invalid_request(body: Any, starts: str = "") -> bool:
    err = body["error"]
    return (
        err["type"] == "invalid_request_error"
        and err["message"].startswith(starts)
        and set(body) == {"error"}
    )


# --- item 1: bearer tokens -----------------------------------------------------------------


async def _raw_request(c: Client, head: bytes, body: bytes = b"") -> bytes:
    """Send raw bytes (non-ASCII header values, half bodies) and return the answer."""
    assert c.server.port is not None
    reader, writer = await asyncio.open_connection("127.0.0.1", c.server.port)
    try:
        writer.write(head + body)
        await writer.drain()
        return await asyncio.wait_for(reader.read(), 10)
    finally:
        writer.close()


def _status(raw: bytes) -> int:
    return int(raw.split(b" ", 2)[1])


async def test_non_ascii_tokens_are_compared_as_utf8_bytes(make_runtime: RuntimeFactory) -> None:
    rt = await make_runtime()
    secret = "tökén-秘密"
    async with TestClient(TestServer(build_app(rt, secret, []))) as c:

        def head(token: bytes) -> bytes:
            return (
                b"GET /api/deliveries HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                b"Authorization: Bearer " + token + b"\r\n\r\n"
            )

        assert _status(await _raw_request(c, head(secret.encode()))) == 200
        assert _status(await _raw_request(c, head("tökén-秘".encode()))) == 401
        assert _status(await _raw_request(c, head(b"\xff\xfe"))) == 401
        assert _status(await _raw_request(c, head(b"test-token"))) == 401
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
    assert _status(await _raw_request(c, head, b"{}")) == 401
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
    assert resp.status == 400 and _is_invalid_request(await resp.json(), "invalid session key")
    for method in ("GET", "PATCH"):
        resp = await c.request(
            method, f"/api/sessions/{quote(bad, safe='')}", json={"label": "x"}, headers=AUTH
        )
        assert resp.status == 400, (method, await resp.text())
        assert _is_invalid_request(await resp.json(), "invalid session key")
    resp = await c.get(f"/api/deliveries?session={quote(bad, safe='')}", headers=AUTH)
    assert resp.status == 400 and _is_invalid_request(await resp.json(), "invalid session key")
    resp = await c.post(
        "/v1/chat/completions",
        headers={**AUTH, "x-crosstalk-session-key": bad},
        json={"messages": [{"role": "user", "content": "hi"}]},
    )
    assert resp.status == 400 and _is_invalid_request(await resp.json(), "invalid session key")
    assert await rt.store.find_sessions("y", spawned_by=None) == []


async def test_a_blank_path_key_is_400(client: tuple[Client, Runtime]) -> None:
    c, _ = client
    resp = await c.get("/api/sessions/%20", headers=AUTH)
    assert resp.status == 400 and _is_invalid_request(await resp.json(), "invalid session key")


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


# --- item 3: bad bodies --------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/tools/invoke", "/v1/chat/completions", "/api/sessions/main"])
@pytest.mark.parametrize(
    ("data", "ctype", "starts"),
    [
        (b"{not json", "application/json", "invalid JSON"),
        (b"[" * 100_000 + b"]" * 100_000, "application/json", "JSON nested deeper"),
        (b'{"a":' * 100_000 + b"1" + b"}" * 100_000, "application/json", "JSON nested deeper"),
        (b"[1, 2]", "application/json", "request body must be a JSON object"),
        (b'{"tool": "sessions_list"}', "text/plain", "Content-Type must be application/json"),
        (b'{"tool": "sessions_list"}', None, "Content-Type must be application/json"),
        (b'{"tool": "sessions_list"}', "application/json; charset=latin-1", "unsupported charset"),
        (b'{"tool": "\xff"}', "application/json", "request body is not valid UTF-8"),
    ],
)
async def test_bad_bodies_are_400_with_the_route_error_shape(
    client: tuple[Client, Runtime], path: str, data: bytes, ctype: str | None, starts: str
) -> None:
    c, rt = client
    await rt.services.ensure_session(rt.keys.main_session_key())
    headers = {**AUTH, "Content-Type": ctype} if ctype else dict(AUTH)
    method = "PATCH" if path.startswith("/api/") else "POST"
    resp = await c.request(
        method,
        path,
        data=data,
        headers=headers,
        skip_auto_headers=() if ctype else ("Content-Type",),
    )
    assert resp.status == 400, await resp.text()
    assert _is_invalid_request(await resp.json(), starts)


@pytest.mark.parametrize(
    "content",
    [
        [{"type": "text", "text": 5}],
        [{"type": "text"}],
        [{"type": 5}],
        ["hello"],
        5,
        {"text": "hi"},
    ],
)
async def test_mistyped_chat_content_is_400(client: tuple[Client, Runtime], content: Any) -> None:
    c, _ = client
    resp = await c.post(
        "/v1/chat/completions",
        headers=AUTH,
        json={"messages": [{"role": "user", "content": content}]},
    )
    assert resp.status == 400 and _is_invalid_request(await resp.json(), "messages.0.content")


@pytest.mark.parametrize(
    "body",
    [
        {"messages": "hi"},
        {"messages": [5]},
        {"messages": [{"role": 5, "content": "x"}]},
        {"messages": [{"role": "user", "content": "x"}], "stream": "y"},
    ],
)
async def test_mistyped_chat_requests_are_400(client: tuple[Client, Runtime], body: Any) -> None:
    c, _ = client
    resp = await c.post("/v1/chat/completions", headers=AUTH, json=body)
    assert resp.status == 400 and _is_invalid_request(await resp.json())


async def test_text_parts_still_work(client: tuple[Client, Runtime]) -> None:
    c, _ = client
    resp = await c.post(
        "/v1/chat/completions",
        headers=AUTH,
        json={
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "hi "},
                        {"type": "image_url", "image_url": {"url": "x"}},
                        {"type": "text", "text": "there"},
                    ],
                }
            ]
        },
    )
    assert resp.status == 200
    assert (await resp.json())["choices"][0]["message"]["content"] == "echo: hi there"


# --- item 4: the body limit ----------------------------------------------------------------


@pytest.mark.parametrize("size", [512 * 1024, 1024 * 1024, 2 * 1024 * 1024])
async def test_bodies_under_the_limit_are_read_in_full(
    client: tuple[Client, Runtime], size: int
) -> None:
    c, _ = client
    body = json.dumps({"tool": "sessions_list", "sessionKey": "main", "pad": "x" * size})
    for _ in range(3):
        resp = await c.post(
            "/tools/invoke", data=body, headers={**AUTH, "Content-Type": "application/json"}
        )
        assert resp.status == 200, await resp.text()


async def test_bodies_over_the_limit_are_refused(client: tuple[Client, Runtime]) -> None:
    c, _ = client
    big = b'{"pad": "' + b"x" * (4 * 1024 * 1024) + b'"}'
    resp = await c.post(
        "/tools/invoke", data=big, headers={**AUTH, "Content-Type": "application/json"}
    )
    assert resp.status == 400 and _is_invalid_request(await resp.json(), "payload too large")

    async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: caught while reading
        for _ in range(5):
            yield b"x" * (1024 * 1024)

    resp = await c.post(
        "/v1/chat/completions", data=chunks(), headers={**AUTH, "Content-Type": "application/json"}
    )
    assert resp.status == 400 and _is_invalid_request(await resp.json(), "payload too large")


# --- item 5: the body read timeout ---------------------------------------------------------


async def test_half_sent_bodies_are_answered_408(client: tuple[Client, Runtime]) -> None:
    c, _ = client

    async def half(path: str, sent: bytes) -> bytes:
        head = (
            f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            "Authorization: Bearer test-token\r\nContent-Length: 100\r\n\r\n"
        ).encode()
        return await _raw_request(c, head, sent)

    answers = await asyncio.gather(
        *(
            half(path, sent)
            for path in ("/tools/invoke", "/healthz", "/nowhere")
            for sent in (b"", b'{"tool": "ses')
            for _ in range(20)
        )
    )
    for raw in answers:  # each one answered 408 and closed (read() returned at EOF)
        assert _status(raw) == 408, raw[:200]
        assert b'"type": "request_timeout"' in raw


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


async def test_a_live_client_sees_the_same_edge(client: tuple[Client, Runtime]) -> None:
    """The official aiohttp client over a real socket (not the test client's helpers)."""
    c, _ = client
    async with ClientSession() as http:
        async with http.post(
            c.make_url("/tools/invoke"),
            data=b"[" * 5000,
            headers={**AUTH, "Content-Type": "application/json"},
        ) as resp:
            assert resp.status == 400
            assert _is_invalid_request(await resp.json(), "JSON nested deeper")


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


async def test_a_body_that_does_not_decode_is_400(client: tuple[Client, Runtime]) -> None:
    c, _ = client
    head = (
        b"POST /tools/invoke HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Authorization: Bearer test-token\r\nContent-Encoding: gzip\r\n"
        b"Content-Length: 15\r\n\r\n"
    )
    raw = await _raw_request(c, head, b"not gzip at all")
    assert _status(raw) == 400
    body = json.loads(raw.split(b"\r\n\r\n", 1)[1])
    assert _is_invalid_request(body, "request body could not be read")
    import gzip

    resp = await c.post(
        "/tools/invoke",
        data=gzip.compress(b'{"tool": "sessions_list"}'),
        headers={**AUTH, "Content-Type": "application/json", "Content-Encoding": "gzip"},
    )
    assert resp.status == 200
