"""Web chat uploads (D154): files in a message frame are stored as D3 parts within
`agents.defaults.media`, a recording is a voice note that speech to text hears, and a file over
the limit is refused with a message naming it."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestServer

from adapters.webchat.adapter import WebchatAdapter
from core.edge.http.server import build_app
from core.runtime import Runtime
from tests.conftest import ConfigFactory
from tests.fakes.audio import FakeAudioServer
from tests.fakes.mcp_server import TINY_PNG
from tests.fakes.model import FakeModelServer

Chat = tuple[Runtime, aiohttp.ClientWebSocketResponse]


@pytest.fixture
async def audio() -> AsyncIterator[FakeAudioServer]:
    fake = FakeAudioServer(transcript="remind me at noon")
    await fake.start()
    yield fake
    await fake.stop()


@pytest.fixture
async def chat(make_config: ConfigFactory, audio: FakeAudioServer) -> AsyncIterator[Chat]:
    extra = {
        "agents": {"defaults": {"media": {"maxUploadBytes": 4096}}},
        "voice": {"stt": {"provider": "openai", "baseUrl": audio.v1}},
    }
    rt = Runtime(make_config(extra))
    adapter = WebchatAdapter.for_gateway(rt.pages)
    await rt.start(adapters=[adapter], probe_models=False)
    server = TestServer(build_app(rt, "test-token", [adapter]))
    await server.start_server()
    async with (
        aiohttp.ClientSession() as http,
        http.ws_connect(server.make_url("/ws?token=test-token")) as ws,
    ):
        assert json.loads((await ws.receive(timeout=5)).data)["type"] == "history"
        yield rt, ws
    await server.close()
    await rt.stop()


async def _next(ws: aiohttp.ClientWebSocketResponse, kind: str) -> dict[str, Any]:
    while True:
        frame = json.loads((await ws.receive(timeout=60)).data)
        if frame["type"] == kind:
            return dict(frame)


def _upload(name: str, mime: str, data: bytes, **kw: Any) -> dict[str, Any]:
    return {"name": name, "mime": mime, "data": base64.b64encode(data).decode(), **kw}


async def _stored(rt: Runtime) -> list[dict[str, Any]]:
    entry = await rt.store.get_session(rt.keys.main_session_key())
    assert entry is not None
    return [m.to_wire() for m in await rt.store.history(entry.session_id) if m.role == "user"]


async def test_an_image_and_a_file_are_stored_as_parts(
    chat: Chat, fake_model: FakeModelServer
) -> None:
    rt, ws = chat
    files = [_upload("dot.png", "image/png", TINY_PNG), _upload("a.txt", "text/plain", b"hi")]
    await ws.send_str(
        json.dumps({"type": "message", "text": "look", "clientId": "c1", "attachments": files})
    )
    reply = await _next(ws, "message")
    assert reply["text"] == "echo: look\n[image: dot.png, 67 B]\n[file: a.txt, 2 B]"
    [row] = await _stored(rt)
    assert row["content"][1:] == [
        {"type": "attachment", "kind": "image", "name": "dot.png", "mime": "image/png", "size": 67},
        {"type": "attachment", "kind": "file", "name": "a.txt", "mime": "text/plain", "size": 2},
    ]


async def test_a_recording_is_heard_and_too_big_is_refused(
    chat: Chat, fake_model: FakeModelServer, audio: FakeAudioServer
) -> None:
    rt, ws = chat
    voice = _upload("voice.webm", "audio/webm", b"\x1aE\xdf\xa3" + b"\x00" * 500, voice=True)
    await ws.send_str(json.dumps({"type": "message", "text": "", "attachments": [voice]}))
    reply = await _next(ws, "message")
    assert reply["text"].startswith("echo: remind me at noon")
    [call] = audio.calls_for("transcriptions")
    assert call.params["file"].startswith(b"\x1aE\xdf\xa3")  # the bytes the page sent
    big = _upload("big.bin", "application/octet-stream", b"x" * 5000)
    await ws.send_str(json.dumps({"type": "message", "text": "x", "attachments": [big]}))
    error = await _next(ws, "error")
    assert error["error"] == "big.bin (5 KB) is over the limit of 4 KB"
    assert len(await _stored(rt)) == 1  # the refused frame stored nothing
