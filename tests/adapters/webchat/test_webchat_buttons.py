"""D72 in the web chat: the request arrives with buttons, a click is a `press` frame, the
request is edited in place; a repeated press (same clientId) counts once (D16), and a double
click (a second press) decides nothing more: the tool runs once (D120)."""

from __future__ import annotations

import json
from typing import Any

import aiohttp
from aiohttp.test_utils import TestServer

from adapters.webchat.adapter import WebchatAdapter
from core.edge.http.server import build_app
from core.runtime import Runtime
from tests.conftest import ConfigFactory
from tests.core.features.approvals.helpers import APPROVALS, add_danger_tool
from tests.fakes.model import FakeModelServer, text, tool_call


async def _next(ws: aiohttp.ClientWebSocketResponse, kind: str) -> dict[str, Any]:
    while True:
        frame: dict[str, Any] = json.loads((await ws.receive(timeout=30)).data)
        if frame["type"] == kind and (kind != "message" or frame.get("text")):
            return frame


async def test_a_click_approves_and_the_request_is_edited(
    make_config: ConfigFactory, fake_model: FakeModelServer
) -> None:
    rt = Runtime(make_config(APPROVALS))
    adapter = WebchatAdapter.for_gateway(rt.pages)
    await rt.start(adapters=[adapter], probe_models=False)
    ran: list[str] = []
    add_danger_tool(rt, ran)
    fake_model.script(tool_call("danger", {"target": "prod"}), text("deleted prod"))
    server = TestServer(build_app(rt, "test-token", [adapter]))
    await server.start_server()
    try:
        async with (
            aiohttp.ClientSession() as http,
            http.ws_connect(server.make_url("/ws?token=test-token")) as ws,
        ):
            await _next(ws, "history")
            await ws.send_str(json.dumps({"type": "message", "text": "delete prod"}))
            request = await _next(ws, "message")
            assert request["text"].startswith("🛡️ Approval needed: danger")
            assert [b["label"] for b in request["buttons"]] == ["Approve", "Deny"]
            press = {"type": "press", "command": request["buttons"][0]["command"], "clientId": "c1"}
            await ws.send_str(json.dumps(press))
            await ws.send_str(json.dumps(press))  # the same press again: dropped (D16)
            await ws.send_str(json.dumps({**press, "clientId": "c2"}))  # a double click
            edit = await _next(ws, "edit")
            assert edit == {
                "type": "edit",
                "messageId": request["messageId"],
                "text": "🛡️ Approved by web chat: danger",
            }
            reply = await _next(ws, "message")
            assert reply["text"] == "deleted prod"
        assert ran == ["prod"]
        question = await rt.store.question(press["command"].split()[-1])
        assert question is not None and question.status == "approved"
    finally:
        await server.close()
        await rt.stop()
