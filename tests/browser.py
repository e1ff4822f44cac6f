"""Drive Debian's headless Chromium over the DevTools protocol (an aiohttp websocket)."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import shutil
from pathlib import Path
from typing import Any

import aiohttp
import pytest

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-port=0",
    "--remote-debugging-address=127.0.0.1",
    # a fake microphone (a beep), allowed without a prompt: the web chat's recording (D154)
    "--use-fake-device-for-media-stream",
    "--use-fake-ui-for-media-stream",
)


_NAVIGATING = ("navigated or closed", "Cannot find context", "Execution context was destroyed")


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def need_chromium() -> None:
    """Every `browser`-marked test (tests/conftest.py): skipped without Chromium, failed in CI,
    which installs it (.ci/run)."""
    if chromium_path() is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is required in CI (installed by .ci/run)")
        pytest.skip("chromium not installed")


MSGS = "[...document.querySelectorAll('#log .msg')]"
"""The web chat page's message rows, as JavaScript."""
CONNECTED = "document.getElementById('status').textContent.startsWith('connected')"
"""The web chat page's socket is open, as JavaScript."""


class Browser:
    """One headless Chromium with one page; `evaluate` runs JavaScript in it."""

    def __init__(self, profile: Path) -> None:
        self.profile = profile
        self.proc: asyncio.subprocess.Process | None = None
        self._http: aiohttp.ClientSession | None = None
        self._ws: aiohttp.ClientWebSocketResponse | None = None
        self._ids = itertools.count(1)
        self.events: list[dict[str, Any]] = []
        """DevTools events seen while waiting for answers (enable a domain to get its own)."""

    async def __aenter__(self) -> Browser:
        exe = chromium_path()
        assert exe, "chromium is not installed"
        self.proc = await asyncio.create_subprocess_exec(
            exe,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={self.profile}",
            "about:blank",
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        port_file = self.profile / "DevToolsActivePort"
        port = await asyncio.wait_for(self._read_port(port_file), 30)
        self._http = aiohttp.ClientSession()
        async with self._http.get(f"http://127.0.0.1:{port}/json/list") as resp:
            targets = await resp.json()
        page = next(t for t in targets if t["type"] == "page")
        self._ws = await self._http.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0)
        return self

    @staticmethod
    async def _read_port(path: Path) -> int:
        while True:
            if path.exists():
                text = path.read_text().split()
                if text:
                    return int(text[0])
            await asyncio.sleep(0.05)  # polling a file Chromium writes; no event to wait on

    async def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        assert self._ws is not None
        msg_id = next(self._ids)
        await self._ws.send_str(
            json.dumps({"id": msg_id, "method": method, "params": params or {}})
        )
        while True:
            frame = json.loads((await asyncio.wait_for(self._ws.receive(), 30)).data)
            if "method" in frame and "id" not in frame:
                self.events.append(frame)
                continue
            if frame.get("id") == msg_id:
                if "error" in frame:
                    raise AssertionError(f"{method}: {frame['error']}")
                result: dict[str, Any] = frame["result"]
                return result

    async def evaluate(self, expression: str) -> Any:
        res = await self.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in res and res["result"].get("className") == "SyntaxError":
            raise AssertionError(f"bad script: {res['result'].get('description')}")
        return res["result"].get("value")

    def events_named(self, method: str) -> list[dict[str, Any]]:
        """The params of every recorded event called `method` (e.g. Network.requestWillBeSent)."""
        return [e.get("params", {}) for e in self.events if e.get("method") == method]

    async def goto(self, url: str) -> None:
        await self.send("Page.enable")
        await self.send("Page.navigate", {"url": url})

    async def wait_for(self, expression: str, timeout: float = 15.0) -> Any:
        """Re-evaluate `expression` until it is truthy, within a deadline."""

        async def loop() -> Any:
            while True:
                try:
                    value = await self.evaluate(expression)
                except AssertionError as exc:  # a form submit or link is loading a new page
                    if not any(m in str(exc) for m in _NAVIGATING):
                        raise
                    value = None
                if value:
                    return value
                await asyncio.sleep(0.05)  # DOM polling: the page offers no event to await here

        return await asyncio.wait_for(loop(), timeout)

    async def __aexit__(self, *exc: object) -> None:
        if self._ws is not None:
            await self._ws.close()
        if self._http is not None:
            await self._http.close()
        if self.proc is not None and self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()
