"""The web chat's WebSocket: frames whose `text` is not a string are refused (D12)."""

from __future__ import annotations

import json
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestServer

from adapters.webchat.adapter import WebchatAdapter
from core.edge.http.server import build_app
from core.runtime import Runtime
from tests.conftest import ConfigFactory
from tests.polling import user_texts


@pytest.mark.parametrize(
    "bad",
    [
        {"type": "message", "text": None},
        {"type": "message", "text": 5},
        {"type": "message", "text": ["hi"]},
        {"type": "message", "text": {"t": "hi"}},
        {"type": "message", "text": True},
        {"type": "message", "text": "   "},
        {"type": "message"},
        ["message", "hi"],
        "[[[[[[[[[[" * 10_000,
    ],
)
async def test_frames_without_string_text_get_an_error_and_start_no_run(
    make_config: ConfigFactory, bad: Any
) -> None:
    rt = Runtime(make_config())
    adapter = WebchatAdapter.for_gateway(rt.pages)
    await rt.start(adapters=[adapter], probe_models=False)
    server = TestServer(build_app(rt, "test-token", [adapter]))
    await server.start_server()
    try:
        async with (
            aiohttp.ClientSession() as http,
            http.ws_connect(server.make_url("/ws?token=test-token")) as ws,
        ):
            assert json.loads((await ws.receive(timeout=5)).data)["type"] == "history"
            await ws.send_str(bad if isinstance(bad, str) else json.dumps(bad))
            frame = json.loads((await ws.receive(timeout=5)).data)
            assert frame["type"] == "error" and "text" in frame["error"]
            await ws.send_str(json.dumps({"type": "message", "text": "hello"}))
            while True:  # the valid message after it is answered ...
                frame = json.loads((await ws.receive(timeout=10)).data)
                if frame["type"] == "message":
                    break
            assert frame["text"] == "echo: hello"
        # ... and it is the only message the session ever stored: the bad frame ran nothing
        assert await user_texts(rt, rt.keys.main_session_key()) == ["hello"]
    finally:
        await server.close()
        await rt.stop()
