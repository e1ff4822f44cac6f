"""The page in headless Chromium against the real gateway: reloaded while its turn streams (D190),
the reply that follows fills a bubble of its own and the user's message stays as it was; a message
typed in another tab of the chat shows as the row its history would show, before its reply
(D191)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import ClientWebSocketResponse
from aiohttp.test_utils import TestServer

from adapters.webchat.adapter import WebchatAdapter
from core.edge.http.server import build_app
from core.runtime import Runtime
from tests.browser import CONNECTED, MSGS, Browser
from tests.conftest import ConfigFactory
from tests.fakes.model import FakeModelServer, RequestJSON
from tests.fakes.model_script import text

pytestmark = pytest.mark.browser


@pytest.fixture
async def page_url(make_config: ConfigFactory) -> AsyncIterator[str]:
    rt = Runtime(make_config())
    adapter = WebchatAdapter.for_gateway(rt.pages)
    await rt.start(adapters=[adapter], probe_models=False)
    server = TestServer(build_app(rt, "test-token", [adapter]))
    await server.start_server()
    try:
        yield str(server.make_url("/"))
    finally:
        await server.close()
        await rt.stop()


async def bubbles(browser: Browser) -> list[tuple[str, str]]:
    value: list[dict[str, Any]] = await browser.evaluate(
        MSGS + ".map(e => ({role: e.dataset.role, text: e.dataset.text}))"
    )
    return [(b["role"], b["text"]) for b in value]


async def another_tab(http: aiohttp.ClientSession, page_url: str) -> ClientWebSocketResponse:
    """A second socket on the page's chat, past its history frame: what another tab sends."""
    other = await http.ws_connect(page_url.replace("http", "ws", 1) + "ws?token=test-token")
    await other.receive(timeout=10)
    return other


async def test_a_reply_streamed_after_a_reload_keeps_the_users_message(
    tmp_path: Path, fake_model: FakeModelServer, page_url: str
) -> None:
    async with Browser(tmp_path / "profile") as browser:
        await browser.goto(f"{page_url}?token=test-token")
        await browser.wait_for(CONNECTED)
        fake_model.script(text("first part, then the rest", pause_after=2))
        await browser.evaluate(
            "(() => { document.getElementById('text').value = 'stream something';"
            " document.getElementById('send').click(); })()"
        )
        await browser.wait_for(f"{MSGS}.some(e => e.classList.contains('pending'))")
        await browser.goto(page_url)  # reloaded mid-turn: the history has the message, no reply
        await browser.wait_for(CONNECTED)
        assert await bubbles(browser) == [("user", "stream something")]
        fake_model.resume()
        await browser.wait_for(
            f"{MSGS}.some(e => e.dataset.text === 'first part, then the rest')"
            f" && !{MSGS}.some(e => e.classList.contains('pending'))"
        )
        assert await bubbles(browser) == [
            ("user", "stream something"),
            ("assistant", "first part, then the rest"),
        ]


async def test_a_message_typed_in_another_tab_shows_before_its_reply(
    tmp_path: Path, page_url: str
) -> None:
    async with Browser(tmp_path / "profile") as browser, aiohttp.ClientSession() as http:
        await browser.goto(f"{page_url}?token=test-token")
        await browser.wait_for(CONNECTED)
        other = await another_tab(http, page_url)
        await other.send_json({"type": "message", "text": "typed in the other tab"})
        await browser.wait_for(
            f"{MSGS}.some(e => e.dataset.text === 'echo: typed in the other tab')"
        )
        assert await bubbles(browser) == [
            ("user", "typed in the other tab"),
            ("assistant", "echo: typed in the other tab"),
        ]
        await other.close()


async def test_new_typed_in_another_tab_starts_this_tab_over(tmp_path: Path, page_url: str) -> None:
    """D191: `/new` typed in another tab clears this one's conversation, as in the tab that
    typed it; what follows shows on an empty page."""
    async with Browser(tmp_path / "profile") as browser, aiohttp.ClientSession() as http:
        await browser.goto(f"{page_url}?token=test-token")
        await browser.wait_for(CONNECTED)
        other = await another_tab(http, page_url)
        await other.send_json({"type": "message", "text": "before the reset"})
        await browser.wait_for(f"{MSGS}.some(e => e.dataset.text === 'echo: before the reset')")
        await other.send_json({"type": "message", "text": "/new"})
        await browser.wait_for(f"!{MSGS}.some(e => e.dataset.text === 'before the reset')")
        await other.send_json({"type": "message", "text": "after the reset"})
        await browser.wait_for(f"{MSGS}.some(e => e.dataset.text === 'echo: after the reset')")
        shown = await bubbles(browser)
        assert ("user", "before the reset") not in shown
        assert shown[0] == ("user", "/new") and shown[-2:] == [
            ("user", "after the reset"),
            ("assistant", "echo: after the reset"),
        ]
        await other.close()


async def test_typing_dots_stay_below_a_message_typed_in_another_tab(
    tmp_path: Path, fake_model: FakeModelServer, page_url: str
) -> None:
    """While the page waits for its answer (the dots), a message typed in another tab shows
    above the dots, which stay the log's last row."""
    gate = asyncio.Event()

    async def held(request: RequestJSON) -> Any:
        await gate.wait()
        return None  # then the fake's echo

    fake_model.set_responder(held)
    async with Browser(tmp_path / "profile") as browser, aiohttp.ClientSession() as http:
        await browser.goto(f"{page_url}?token=test-token")
        await browser.wait_for(CONNECTED)
        await browser.evaluate(
            "(() => { document.getElementById('text').value = 'asked here';"
            " document.getElementById('send').click(); })()"
        )
        await browser.wait_for("document.getElementById('typing') !== null")
        other = await another_tab(http, page_url)
        await other.send_json({"type": "message", "text": "typed elsewhere"})
        await browser.wait_for(f"{MSGS}.some(e => e.dataset.text === 'typed elsewhere')")
        last = "document.getElementById('log').lastElementChild.id"
        assert await browser.evaluate(last) == "typing"
        gate.set()
        await other.close()
