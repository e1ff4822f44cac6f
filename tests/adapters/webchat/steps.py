"""What the web chat race tests share (D190, D191): a cron job that replies to the web chat, the
adapter's step hook that holds a step until the test releases it, a gateway and what a page gets
(the `gateway` fixture is in this folder's conftest.py)."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp.test_utils import TestServer

from adapters.webchat.tabs import Step
from core.runtime import Runtime
from tests.polling import eventually

AUTH = {"Authorization": "Bearer test-token"}
WS = "/ws?token=test-token"
CRON_REPLY = "echo: morning summary"
EXTRA = {
    "cron": {
        "jobs": [
            {
                "id": "morning",
                "every": "1h",
                "message": "morning summary",
                "deliver": {"channel": "webchat", "to": "owner"},
            }
        ]
    }
}


@dataclass
class Held:
    """One held step: `reached` is set when it is passed; it goes on once `released` is set."""

    reached: asyncio.Event = field(default_factory=asyncio.Event)
    released: asyncio.Event = field(default_factory=asyncio.Event)

    async def wait(self) -> None:
        await asyncio.wait_for(self.reached.wait(), 15)


class Steps:
    """The adapter's step hook (D190): holds the n-th pass of a step until the test releases it."""

    def __init__(self) -> None:
        self.passed: Counter[Step] = Counter()
        self.holds: dict[tuple[Step, int], Held] = {}

    def hold(self, step: Step, nth: int = 1) -> Held:
        return self.holds.setdefault((step, nth), Held())

    async def __call__(self, peer: str, step: Step) -> None:
        self.passed[step] += 1
        held = self.holds.get((step, self.passed[step]))
        if held is not None:
            held.reached.set()
            await held.released.wait()


@dataclass
class Gateway:
    http: aiohttp.ClientSession
    server: TestServer
    steps: Steps
    rt: Runtime

    def ws(self) -> Any:
        return self.http.ws_connect(self.server.make_url(WS))

    async def fire(self) -> None:
        resp = await self.http.post(self.server.make_url("/api/cron/morning/run"), headers=AUTH)
        assert resp.status == 202, await resp.text()

    async def fired(self) -> None:
        """The cron job's turn ended and its delivery's outcome is written."""

        async def done() -> bool:
            url = self.server.make_url("/api/cron/morning")
            got = await (await self.http.get(url, headers=AUTH)).json()
            return bool(got.get("lastStatus") == "ok")

        await eventually(done, what="the cron job's delivery")


async def page_view(ws: aiohttp.ClientWebSocketResponse) -> list[dict[str, Any]]:
    """What the page gets: the history frame first (asserted), then every frame sent to it up to
    now (a refused frame's answer marks the end: anything sent before it came before it)."""
    first = json.loads((await ws.receive(timeout=10)).data)
    assert first["type"] == "history", f"a {first['type']} frame came before the history"
    return [first, *(await page_view_after(ws))]


async def page_view_after(ws: aiohttp.ClientWebSocketResponse) -> list[dict[str, Any]]:
    """The frames after a history frame already read, up to now."""
    await ws.send_json({"type": "message", "text": 5})
    frames = []
    while (frame := json.loads((await ws.receive(timeout=10)).data))["type"] != "error":
        frames.append(frame)
    return frames
