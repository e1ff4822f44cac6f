"""The web chat's side of a tool image across a kill -9 (D78, D151): the web chat has no
receipt to lose (the frame goes to the open sockets), so the gateway process is killed as soon
as the page got the image. After the restart the page loads the conversation with the image
once — from the reply's stored parts — and no second image frame comes, also not when the
conversation goes on."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from core.store import Store
from tests.e2e.chart_gateway import chart_config
from tests.fakes.mcp_server import TINY_PNG
from tests.fakes.model import FakeModelServer, text, tool_call
from tests.gateway_process import GatewayProcess
from tests.polling import eventually


async def _frame(ws: aiohttp.ClientWebSocketResponse) -> dict[str, Any]:
    found: dict[str, Any] = json.loads((await asyncio.wait_for(ws.receive(), 60)).data)
    return found


async def _until(ws: aiohttp.ClientWebSocketResponse, kind: str) -> list[dict[str, Any]]:
    """Frames up to and including the first of type `kind`."""
    seen = [await _frame(ws)]
    while seen[-1]["type"] != kind:
        seen.append(await _frame(ws))
    return seen


@pytest.mark.timeout(240)
async def test_the_web_chat_shows_a_tools_image_once_across_a_kill_minus_nine(
    tmp_path: Path, fake_model: FakeModelServer
) -> None:
    fake_model.script(tool_call("calc__chart", {}), text("Chart above."), text("You are welcome."))
    cfg = chart_config(tmp_path, fake_model, "")
    async with GatewayProcess(cfg) as gw, aiohttp.ClientSession() as http:
        async with http.ws_connect(f"{gw.url}/ws?token={gw.token}") as ws:
            assert (await _frame(ws))["type"] == "history"
            await ws.send_str(json.dumps({"type": "message", "text": "the chart, please"}))
            frames = await _until(ws, "media")
            await gw.kill()  # right after the page got the image
        [shown] = [f["media"] for f in frames if f["type"] == "media"]
    store = Store(f"sqlite+aiosqlite:///{tmp_path / 'state'}/crosstalk.db", tmp_path)
    try:
        async with GatewayProcess(cfg) as gw, aiohttp.ClientSession() as http:

            async def settled() -> bool:
                rows = await store.list_deliveries()
                return bool(rows) and all(d.outcome != "pending" for d in rows)

            await eventually(settled, 60, "the reply's delivery settled")
            async with http.ws_connect(f"{gw.url}/ws?token={gw.token}") as ws:
                history = await _frame(ws)
                assert history["type"] == "history"
                media = [m for row in history["messages"] for m in row.get("media") or []]
                assert [(m["kind"], m["id"]) for m in media] == [("image", shown["id"])]
                await ws.send_str(json.dumps({"type": "message", "text": "thanks"}))
                later = await _until(ws, "message")
                while later[-1].get("text") != "You are welcome.":
                    later += await _until(ws, "message")
                assert [f for f in later if f["type"] == "media"] == []
            auth = {"Authorization": "Bearer e2e-token"}
            async with http.get(f"{gw.url}/webchat/media/{shown['id']}", headers=auth) as r:
                assert r.status == 200 and await r.read() == TINY_PNG
    finally:
        await store.close()
