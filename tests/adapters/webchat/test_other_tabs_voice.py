"""A voice note recorded in one web chat tab reaches the chat's other tabs (D191) as the row
their history shows: its transcript, which the stored row carries in place of the empty text
the page sent (D154), so it is found by its time, not by the text typed; SQLite and PostgreSQL."""

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
from tests.adapters.webchat.steps import WS, page_view_after
from tests.conftest import ConfigFactory
from tests.fakes.audio import FakeAudioServer
from tests.fakes.model import FakeModelServer

Frame = dict[str, Any]
HEARD = "remind me at noon"


@pytest.fixture
async def audio() -> AsyncIterator[FakeAudioServer]:
    fake = FakeAudioServer(transcript=HEARD)
    await fake.start()
    yield fake
    await fake.stop()


@pytest.fixture
async def server(
    make_config: ConfigFactory,
    audio: FakeAudioServer,
    fake_model: FakeModelServer,
    db: dict[str, Any],
) -> AsyncIterator[TestServer]:
    voice = {"voice": {"stt": {"provider": "openai", "baseUrl": audio.v1}}}
    rt = Runtime(make_config(voice | db))
    adapter = WebchatAdapter.for_gateway(rt.pages)
    await rt.start(adapters=[adapter], probe_models=False)
    server = TestServer(build_app(rt, "test-token", [adapter]))
    await server.start_server()
    yield server
    await server.close()
    await rt.stop()


async def until_reply(ws: aiohttp.ClientWebSocketResponse) -> list[Frame]:
    frames = []
    while True:
        frames.append(frame := json.loads((await ws.receive(timeout=30)).data))
        if frame["type"] == "message" and frame.get("runId"):
            return frames


async def test_a_voice_note_shows_in_the_other_tab_as_its_transcript(server: TestServer) -> None:
    async with (
        aiohttp.ClientSession() as http,
        http.ws_connect(server.make_url(WS)) as a,
        http.ws_connect(server.make_url(WS)) as b,
    ):
        for ws in (a, b):
            assert json.loads((await ws.receive(timeout=10)).data)["type"] == "history"
        data = base64.b64encode(b"\x1aE\xdf\xa3" + b"\x00" * 500).decode()
        voice = {"name": "voice.webm", "mime": "audio/webm", "data": data, "voice": True}
        await a.send_json({"type": "message", "text": "", "attachments": [voice]})
        on_b = await until_reply(b)
        on_b += await page_view_after(b)
        said = [f for f in on_b if f["type"] == "user"]
        assert len(said) == 1, f"the other tab got {len(said)} user frames: {on_b}"
        assert said[0]["text"].startswith(HEARD)
        async with http.ws_connect(server.make_url(WS)) as later:
            rows = json.loads((await later.receive(timeout=10)).data)["messages"]
        [row] = [m for m in rows if m["role"] == "user"]
        assert {k: v for k, v in said[0].items() if k != "type"} == row
