"""D12 edges and concurrent first messages, over real HTTP and the real web chat, on SQLite and
PostgreSQL: hostile text never bricks a session, and simultaneous first messages all land."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestClient, TestServer

from adapters.webchat.adapter import WebchatAdapter
from core.edge.http.server import build_app
from core.runtime import Runtime
from tests.conftest import Client, RuntimeFactory
from tests.fakes.model import FakeModelServer
from tests.fakes.model_script import echo
from tests.pg import fresh_pg_database
from tests.polling import eventually

AUTH = {"Authorization": "Bearer test-token", "Content-Type": "application/json"}


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
async def gateway(
    request: pytest.FixtureRequest, make_runtime: RuntimeFactory
) -> AsyncIterator[tuple[Client, Runtime]]:
    async def start(extra: dict[str, Any]) -> AsyncIterator[tuple[Client, Runtime]]:
        rt = Runtime(make_runtime_config(extra))
        webchat = WebchatAdapter.for_gateway(rt.pages)
        await rt.start(adapters=[webchat], probe_models=False)
        try:
            async with TestClient(TestServer(build_app(rt, "test-token", [webchat]))) as c:
                yield c, rt
        finally:
            await rt.stop()

    make_runtime_config = request.getfixturevalue("make_config")
    if request.param == "sqlite":
        async for pair in start({}):
            yield pair
    else:
        async with fresh_pg_database() as url:
            async for pair in start({"gateway": {"database": {"url": url}}}):
                yield pair


async def _chat(c: Client, raw_text: str, key: str) -> tuple[int, Any]:
    """`raw_text` is JSON string *source*, so lone surrogates travel as JSON escapes do."""
    body = '{"messages": [{"role": "user", "content": "' + raw_text + '"}]}'
    resp = await c.post(
        "/v1/chat/completions", data=body, headers={**AUTH, "x-crosstalk-session-key": key}
    )
    return resp.status, await resp.json(content_type=None)


async def test_lone_surrogates_and_nul_never_brick_a_session(
    gateway: tuple[Client, Runtime], fake_model: FakeModelServer
) -> None:
    c, rt = gateway
    fake_model.set_responder(echo)
    status, body = await _chat(c, "hi \\ud800 there \\u0000!", "badtext")
    assert status == 200, body
    assert body["choices"][0]["message"]["content"] == "echo: hi \ufffd there \ufffd!"
    status, body = await _chat(c, "second turn", "badtext")  # the session still works
    assert status == 200, body
    resp = await c.post(
        "/tools/invoke",
        headers=AUTH,
        data=json.dumps({"tool": "sessions_history", "args": {"sessionKey": "badtext"}}),
    )
    assert resp.status == 200
    history = (await resp.json())["result"]["details"]["messages"]
    assert [m["content"][0]["text"] for m in history] == [
        "hi \ufffd there \ufffd!",
        "echo: hi \ufffd there \ufffd!",
        "second turn",
        "echo: second turn",
    ]
    # keys, labels and filters with NUL: cleaned, no 500 (PostgreSQL refuses NUL in text)
    resp = await c.post(
        "/tools/invoke",
        headers=AUTH,
        data=(
            '{"tool": "sessions_list", "sessionKey": "bad\\u0000key", '
            '"args": {"kinds": ["ma\\u0000in"], "limit": 5}}'
        ),
    )
    assert resp.status == 200, await resp.text()
    assert await rt.store.get_session("agent:main:bad\ufffdkey") is not None
    resp = await c.patch(
        "/api/sessions/bad%00key", headers=AUTH, data='{"label": "lab\\u0000el \\udc00"}'
    )
    assert resp.status == 200, await resp.text()
    assert (await resp.json())["entry"]["label"] == "lab\ufffdel \ufffd"
    resp = await c.get("/api/deliveries?outcome=failed&session=a%00b", headers=AUTH)
    assert resp.status == 200
    resp = await c.get("/api/deliveries?outcome=x%00y", headers=AUTH)  # not an outcome: 400
    assert (
        resp.status == 400 and "outcome must be one of" in (await resp.json())["error"]["message"]
    )
    # nothing is left half-done: no run queued or running, and the JSONL mirror matches
    entry = await rt.store.get_session("agent:main:badtext")
    assert entry is not None
    run = await rt.store.last_run(entry.key)
    assert run is not None and run.status == "ok"
    lines = rt.store.transcript_path(entry.session_id).read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["content"][0]["text"] for line in lines] == [
        m["content"][0]["text"] for m in history
    ]


async def test_model_output_and_tool_arguments_are_cleaned(
    gateway: tuple[Client, Runtime], fake_model: FakeModelServer
) -> None:
    from tests.fakes.model import text, tool_call

    c, rt = gateway
    fake_model.script(
        tool_call("sessions_list", {"kinds": ["x\x00"], "limit": 1}),
        text("reply \ud800 with \x00 nul"),
    )
    status, body = await _chat(c, "go", "model-out")
    assert status == 200, body
    assert body["choices"][0]["message"]["content"] == "reply \ufffd with \ufffd nul"
    entry = await rt.store.get_session("agent:main:model-out")
    assert entry is not None
    history = await rt.store.history(entry.session_id)
    call = next(b for m in history for b in m.content if b["type"] == "toolCall")
    assert call["arguments"]["kinds"] == ["x\ufffd"]
    # the tool ran with cleaned arguments (PostgreSQL would refuse the NUL)
    result = next(m for m in history if m.role == "toolResult")
    assert not result.is_error and '"count":' in result.plain_text()
    rt.store.transcript_path(entry.session_id).read_text(encoding="utf-8")


async def test_webchat_frame_with_bad_text_is_stored_cleaned_and_answered(
    gateway: tuple[Client, Runtime], fake_model: FakeModelServer
) -> None:
    c, rt = gateway
    fake_model.set_responder(echo)
    async with c.ws_connect("/ws?token=test-token") as ws:
        assert (await ws.receive_json(timeout=10))["type"] == "history"
        await ws.send_str('{"type": "message", "text": "web \\ud800\\u0000"}')
        while (frame := await ws.receive_json(timeout=10))["type"] != "message":
            pass
        assert frame["text"] == "echo: web \ufffd\ufffd"
    entry = await rt.store.get_session(rt.keys.main_session_key())
    assert entry is not None
    assert [m.plain_text() for m in await rt.store.history(entry.session_id)] == [
        "web \ufffd\ufffd",
        "echo: web \ufffd\ufffd",
    ]


async def test_twenty_simultaneous_first_messages_over_http(
    gateway: tuple[Client, Runtime], fake_model: FakeModelServer
) -> None:
    c, rt = gateway
    fake_model.set_responder(echo)
    results = await asyncio.gather(*(_chat(c, f"m{i:02d}", "brand-new") for i in range(20)))
    assert [status for status, _ in results] == [200] * 20, results
    assert sorted(b["choices"][0]["message"]["content"] for _, b in results) == [
        f"echo: m{i:02d}" for i in range(20)
    ]
    entry = await rt.store.get_session("agent:main:brand-new")
    assert entry is not None
    history = await rt.store.history(entry.session_id, limit=100)
    assert sorted(m.plain_text() for m in history if m.role == "user") == [
        f"m{i:02d}" for i in range(20)
    ]
    # each turn's input directly followed by its reply (D13)
    texts = [m.plain_text() for m in history]
    assert all(texts[i + 1] == f"echo: {texts[i]}" for i in range(0, 40, 2))


async def test_twenty_simultaneous_first_messages_through_the_web_chat(
    gateway: tuple[Client, Runtime], fake_model: FakeModelServer
) -> None:
    c, rt = gateway
    fake_model.set_responder(echo)
    sockets = [await c.ws_connect(f"/ws?token=test-token&chat=peer{i}") for i in range(20)]
    try:
        for ws in sockets:
            assert (await ws.receive_json(timeout=10))["type"] == "history"
        await asyncio.gather(
            *(
                ws.send_str(json.dumps({"type": "message", "text": f"w{i:02d}"}))
                for i, ws in enumerate(sockets)
            )
        )

        async def answer(ws: aiohttp.ClientWebSocketResponse) -> str:
            while (frame := await ws.receive_json(timeout=30))["type"] != "message":
                pass
            return str(frame["text"])

        answers = await asyncio.gather(*(answer(ws) for ws in sockets))
        assert answers == [f"echo: w{i:02d}" for i in range(20)]
    finally:
        for ws in sockets:
            await ws.close()
    key = rt.keys.main_session_key()

    async def users() -> list[str] | None:
        entry = await rt.store.get_session(key)
        msgs = await rt.store.history(entry.session_id, limit=100) if entry else []
        texts = sorted(m.plain_text() for m in msgs if m.role == "user")
        return texts if len(texts) == 20 else None

    assert await eventually(users) == [f"w{i:02d}" for i in range(20)]
