"""Issue 24's noise and rough edges on the HTTP side (D134): a stream client that leaves is not
an error, `/healthz` counts web-chat clients as a number, and sessions made over the OpenAI API
name their channel."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from core.edge.http.openai_session import session_of
from core.edge.http.server import start_gateway
from core.runtime import Runtime
from tests.conftest import ConfigFactory
from tests.fakes.model import FakeModelServer, text
from tests.polling import eventually

AUTH = {"Authorization": "Bearer test-token"}
ANSWER = "one two three four five"


@pytest.fixture
async def gateway(
    make_config: ConfigFactory,
) -> AsyncIterator[tuple[aiohttp.ClientSession, Runtime]]:
    """The gateway's own server (its runner lets a handler finish when its client leaves, where
    aiohttp's TestServer would cancel it)."""
    gw = await start_gateway(make_config({"gateway": {"auth": {"token": "test-token"}}}), port=0)
    try:
        async with aiohttp.ClientSession(gw.url.rstrip("/")) as c:
            yield c, gw.runtime
    finally:
        await gw.stop()


async def _leave_mid_stream(
    c: aiohttp.ClientSession, fake: FakeModelServer, path: str, body: Any
) -> None:
    """Read the stream's first bytes, hang up while the model is held, let the model finish."""
    fake.script(text(ANSWER, pause_after=2))
    resp = await c.post(path, headers=AUTH, json={**body, "stream": True})
    assert resp.status == 200
    await resp.content.readany()
    await asyncio.wait_for(fake.paused.wait(), 10)
    resp.close()  # the client goes away (a stopped generation, a closed tab)
    fake.resume()


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/chat/completions", {"messages": [{"role": "user", "content": "count"}]}),
        ("/v1/responses", {"input": "count"}),
    ],
)
async def test_a_stream_client_that_leaves_is_not_an_error(
    gateway: tuple[aiohttp.ClientSession, Runtime],
    fake_model: FakeModelServer,
    caplog: pytest.LogCaptureFixture,
    path: str,
    body: Any,
) -> None:
    c, rt = gateway
    caplog.set_level(logging.DEBUG)
    await _leave_mid_stream(c, fake_model, path, body)
    said = [("user", "count"), ("assistant", ANSWER)]
    # the handler still reaches the turn's end: the conversation is remembered for the next
    # request that resends it, and the client's leaving is a debug line, never an error
    key = await eventually(lambda: session_of(rt.store, said), what="conversation remembered")
    assert key.startswith("agent:main:openai:")
    await eventually(
        lambda: _async(any("went away" in r.getMessage() for r in caplog.records)),
        what="the debug line",
    )
    loud = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert loud == [], [(r.name, r.getMessage()) for r in loud]
    assert not any(r.exc_info for r in caplog.records)


async def _async(value: bool) -> bool:
    return value


async def test_healthz_counts_web_chat_clients_as_a_number(
    gateway: tuple[aiohttp.ClientSession, Runtime],
) -> None:
    c, _ = gateway

    async def clients() -> Any:
        body = await (await c.get("/healthz", headers=AUTH)).json()
        (webchat,) = [ch for ch in body["channels"] if ch["channel"] == "webchat"]
        return webchat["clients"]

    assert await clients() == 0  # was the string "0"
    async with c.ws_connect("/ws?token=test-token") as ws:
        assert (await ws.receive_json())["type"] == "history"
        assert await clients() == 1


async def test_sessions_made_over_the_openai_api_name_their_channel(
    gateway: tuple[aiohttp.ClientSession, Runtime], fake_model: FakeModelServer
) -> None:
    c, rt = gateway
    for extra in ({}, {"user": "alice"}):
        body = {"messages": [{"role": "user", "content": "hi"}], **extra}
        assert (await c.post("/v1/chat/completions", headers=AUTH, json=body)).status == 200
    resp = await c.post(
        "/tools/invoke",
        headers=AUTH,
        json={"tool": "sessions_list", "args": {"limit": 50, "messageLimit": 1}},
    )
    rows = (await resp.json())["result"]["details"]["sessions"]
    channels = {r["key"]: r["channel"] for r in rows if r.get("messages")}
    assert channels == {
        next(k for k in channels if k.startswith("agent:main:openai:")): "openai",
        "agent:main:openai-user:alice": "openai",
    }
    # the main session, reached with the header, is not made an `openai` chat
    main = {"x-crosstalk-session-key": "main", **AUTH}
    body = {"messages": [{"role": "user", "content": "hi"}]}
    assert (await c.post("/v1/chat/completions", headers=main, json=body)).status == 200
    entry = await rt.store.get_session(rt.keys.main_session_key("main"))
    assert entry is not None and entry.channel is None


async def test_an_mcp_client_that_leaves_its_event_stream_is_not_an_error(
    gateway: tuple[aiohttp.ClientSession, Runtime], caplog: pytest.LogCaptureFixture
) -> None:
    """What MCP Inspector does: initialize, open the `GET /mcp` event stream, go away."""
    c, _ = gateway
    caplog.set_level(logging.DEBUG, logger="core")
    headers = {
        **AUTH,
        "Accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2025-06-18",
    }
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "inspector", "version": "0"},
        },
    }
    assert (await c.post("/mcp", headers=headers, json=init)).status == 200
    stream = await c.get("/mcp", headers={**headers, "Accept": "text/event-stream"})
    assert stream.status == 200
    stream.close()
    await eventually(
        lambda: _async(
            any("GET /mcp: the client went away" in r.getMessage() for r in caplog.records)
        ),
        what="the stream's end",
    )
    loud = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert loud == [], [(r.name, r.getMessage()) for r in loud]
