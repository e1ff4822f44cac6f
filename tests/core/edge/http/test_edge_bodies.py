"""The HTTP edge (D12) on a real aiohttp server: malformed, deep, mistyped and undecodable bodies,
content types, the body limit read in full, and the body read timeout. Every case is a 4xx
with the route's error shape."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import ClientSession

from core.runtime import Runtime
from tests.conftest import Client
from tests.core.edge.http.edge_helpers import AUTH, is_invalid_request, raw_request, status_of

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
    assert is_invalid_request(await resp.json(), starts)


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
    assert resp.status == 400 and is_invalid_request(await resp.json(), "messages.0.content")


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
    assert resp.status == 400 and is_invalid_request(await resp.json())


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
    assert resp.status == 400 and is_invalid_request(await resp.json(), "payload too large")

    async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: caught while reading
        for _ in range(5):
            yield b"x" * (1024 * 1024)

    resp = await c.post(
        "/v1/chat/completions", data=chunks(), headers={**AUTH, "Content-Type": "application/json"}
    )
    assert resp.status == 400 and is_invalid_request(await resp.json(), "payload too large")


# --- item 5: the body read timeout ---------------------------------------------------------


async def test_half_sent_bodies_are_answered_408(client: tuple[Client, Runtime]) -> None:
    c, _ = client

    async def half(path: str, sent: bytes) -> bytes:
        head = (
            f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            "Authorization: Bearer test-token\r\nContent-Length: 100\r\n\r\n"
        ).encode()
        return await raw_request(c, head, sent)

    answers = await asyncio.gather(
        *(
            half(path, sent)
            for path in ("/tools/invoke", "/healthz", "/nowhere")
            for sent in (b"", b'{"tool": "ses')
            for _ in range(20)
        )
    )
    for raw in answers:  # each one answered 408 and closed (read() returned at EOF)
        assert status_of(raw) == 408, raw[:200]
        assert b'"type": "request_timeout"' in raw


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
            assert is_invalid_request(await resp.json(), "JSON nested deeper")


async def test_a_body_that_does_not_decode_is_400(client: tuple[Client, Runtime]) -> None:
    c, _ = client
    head = (
        b"POST /tools/invoke HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Authorization: Bearer test-token\r\nContent-Encoding: gzip\r\n"
        b"Content-Length: 15\r\n\r\n"
    )
    raw = await raw_request(c, head, b"not gzip at all")
    assert status_of(raw) == 400
    body = json.loads(raw.split(b"\r\n\r\n", 1)[1])
    assert is_invalid_request(body, "request body could not be read")
    import gzip

    resp = await c.post(
        "/tools/invoke",
        data=gzip.compress(b'{"tool": "sessions_list"}'),
        headers={**AUTH, "Content-Type": "application/json", "Content-Encoding": "gzip"},
    )
    assert resp.status == 200
