"""A gateway process seen from outside: a web-chat page on its WebSocket (every frame kept), and
a fake-model responder that holds chosen turns until released."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp

from tests.fakes.model import RequestJSON, last_user_text, text
from tests.gateway_process import GatewayProcess


class Held:
    """A fake-model responder that answers `echo: <text>`, holding the texts in `hold`."""

    def __init__(self, *hold: str) -> None:
        self.hold = set(hold)
        self.release = asyncio.Event()
        self.reached = asyncio.Event()

    async def __call__(self, body: RequestJSON) -> Any:
        said = last_user_text(body)
        if said in self.hold:
            self.reached.set()
            await self.release.wait()
        return text(f"echo: {said}")


class Chat:
    """A web-chat page: one WebSocket, every frame kept."""

    def __init__(self, gw: GatewayProcess) -> None:
        self.gw = gw
        self.frames: list[dict[str, Any]] = []
        self._changed = asyncio.Event()
        self._http: aiohttp.ClientSession | None = None
        self._ws: aiohttp.ClientWebSocketResponse | None = None
        self._reader: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Chat:
        self._http = aiohttp.ClientSession()
        self._ws = await self._http.ws_connect(f"{self.gw.url}/ws?token={self.gw.token}")
        self._reader = asyncio.ensure_future(self._read())
        await self.wait_for(lambda f: f.get("type") == "history")
        return self

    async def _read(self) -> None:
        assert self._ws is not None
        async for msg in self._ws:
            if msg.type == aiohttp.WSMsgType.TEXT:
                self.frames.append(json.loads(msg.data))
                self._changed.set()

    async def send(self, message: str) -> None:
        assert self._ws is not None
        await self._ws.send_str(json.dumps({"type": "message", "text": message}))

    def texts(self) -> list[str]:
        return [
            str(f.get("text"))
            for f in self.frames
            if f.get("type") == "message" and f.get("role") == "assistant"
        ]

    async def wait_for(self, check: Any, timeout: float = 30) -> None:
        async with asyncio.timeout(timeout):
            while not any(check(f) for f in self.frames):
                self._changed.clear()
                await self._changed.wait()

    async def __aexit__(self, *exc: object) -> None:
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            self._reader.cancel()
        if self._http is not None:
            await self._http.close()
