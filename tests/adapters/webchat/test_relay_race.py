"""Frames relayed from another gateway process (D28), on two runtimes on one PostgreSQL database: a
reply relayed after a page's history showed it is dropped (D190), the cron job on A, the page on
B; a message typed in a tab on A reaches a tab on B before its reply, once (D191)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestServer

from adapters.webchat.adapter import WebchatAdapter
from core.edge.http.server import build_app
from core.runtime import Runtime
from tests.adapters.webchat.steps import AUTH, CRON_REPLY, EXTRA, WS, Steps, page_view_after
from tests.conftest import ConfigFactory
from tests.fakes.model import FakeModelServer
from tests.pg import fresh_pg_database
from tests.polling import eventually

pytestmark = pytest.mark.postgres


@dataclass
class Process:
    server: TestServer
    steps: Steps
    adapter: WebchatAdapter


@pytest.fixture
async def two(
    make_config: ConfigFactory, fake_model: FakeModelServer, tmp_path: Path
) -> AsyncIterator[tuple[aiohttp.ClientSession, Process, Process]]:
    async with fresh_pg_database() as url:
        runtimes: list[Runtime] = []
        processes: list[Process] = []
        try:
            for name in ("a", "b"):
                gateway = {"stateDir": str(tmp_path / name), "database": {"url": url}}
                rt = Runtime(make_config(EXTRA | {"gateway": gateway}))
                rt.cron.run_loop = False
                adapter = WebchatAdapter.for_gateway(rt.pages)
                adapter.step_hook = steps = Steps()
                await rt.start(adapters=[adapter], probe_models=False)
                runtimes.append(rt)
                server = TestServer(build_app(rt, "test-token", [adapter]))
                await server.start_server()
                processes.append(Process(server, steps, adapter))
            async with aiohttp.ClientSession() as http:
                yield http, processes[0], processes[1]
        finally:
            for p in processes:
                for held in p.steps.holds.values():
                    held.released.set()
                await p.server.close()
            for rt in runtimes:
                await rt.stop()


async def _fire(http: aiohttp.ClientSession, p: Process) -> None:
    resp = await http.post(p.server.make_url("/api/cron/morning/run"), headers=AUTH)
    assert resp.status == 202, await resp.text()


async def _runs(http: aiohttp.ClientSession, p: Process) -> int:
    got = await (await http.get(p.server.make_url("/api/cron/morning"), headers=AUTH)).json()
    return len([r for r in got.get("runs") or [] if r.get("delivery") == "delivered"])


async def test_a_frame_relayed_after_the_history_showed_it_is_dropped(
    two: tuple[aiohttp.ClientSession, Process, Process],
) -> None:
    http, a, b = two
    sending = a.steps.hold("sending")
    await _fire(http, a)
    await sending.wait()  # A's delivery is open; its frame has gone nowhere yet
    async with http.ws_connect(b.server.make_url(WS)) as ws:
        history = json.loads((await ws.receive(timeout=10)).data)
        assert history["type"] == "history"
        [shown] = history["messages"]
        assert shown["text"] == CRON_REPLY
        sending.released.set()  # A sends it: to its own tabs, and on the bus to B's
        await eventually(lambda: _runs(http, a), what="the first reply delivered")
        await _fire(http, a)  # a second reply: relayed to B after the first, in order (D28)
        frame = json.loads((await ws.receive(timeout=10)).data)
        assert frame["type"] == "message" and frame["text"] == CRON_REPLY
        assert frame["deliveryId"] != shown["deliveryId"], "the history's reply came again"


async def _until_reply(ws: aiohttp.ClientWebSocketResponse, text: str) -> list[dict[str, Any]]:
    frames = [json.loads((await ws.receive(timeout=10)).data)]
    while not (frames[-1]["type"] == "message" and frames[-1]["text"] == f"echo: {text}"):
        frames.append(json.loads((await ws.receive(timeout=10)).data))
    return frames


async def test_a_message_typed_on_a_reaches_a_tab_on_b_before_its_reply(
    two: tuple[aiohttp.ClientSession, Process, Process],
) -> None:
    """The reply is ready on A while the message's frame is still held there: B gets the
    message first all the same (A relays its frames in the order its own tabs get them)."""
    http, a, b = two
    async with (
        http.ws_connect(a.server.make_url(WS)) as sender,
        http.ws_connect(b.server.make_url(WS)) as other,
    ):
        for ws in (sender, other):
            assert json.loads((await ws.receive(timeout=10)).data)["type"] == "history"
        stored, sent = a.steps.hold("stored"), a.steps.hold("sent")
        await sender.send_json({"type": "message", "text": "hello"})
        await stored.wait()
        await sent.wait()  # the reply was handed over while the message's frame is held
        sent.released.set()
        stored.released.set()
        frames = await _until_reply(other, "hello")
        assert frames[0]["type"] == "user" and frames[0]["text"] == "hello", frames
        assert [f for f in frames + await page_view_after(other) if f["type"] == "user"] == [
            frames[0]
        ]
        mine = await _until_reply(sender, "hello") + await page_view_after(sender)
        assert [f for f in mine if f["type"] == "user"] == []


async def test_a_tab_on_b_whose_history_shows_the_message_drops_its_relayed_frame(
    two: tuple[aiohttp.ClientSession, Process, Process],
) -> None:
    http, a, b = two
    async with http.ws_connect(a.server.make_url(WS)) as sender:
        assert json.loads((await sender.receive(timeout=10)).data)["type"] == "history"
        stored = a.steps.hold("stored")
        await sender.send_json({"type": "message", "text": "hello"})
        await stored.wait()  # stored on A, its frame not yet sent nor relayed
        async with http.ws_connect(b.server.make_url(WS)) as other:
            history = json.loads((await other.receive(timeout=10)).data)
            assert [m["text"] for m in history["messages"] if m["role"] == "user"] == ["hello"]
            stored.released.set()
            await _until_reply(sender, "hello")
            later = await _until_reply(other, "hello") + await page_view_after(other)
            assert [f for f in later if f["type"] == "user"] == []


async def test_a_tab_closed_while_its_message_is_stored_keeps_no_frame_from_b(
    two: tuple[aiohttp.ClientSession, Process, Process],
) -> None:
    """The tab a message was typed in on A is closed while the router stores it: the frames that
    waited behind the message still reach the chat's tab on B (writing them to the closed
    socket failed, and the relay after it was skipped: B never got the reply)."""
    http, a, b = two
    async with http.ws_connect(b.server.make_url(WS)) as other:
        assert json.loads((await other.receive(timeout=10)).data)["type"] == "history"
        stored, sent = a.steps.hold("stored"), a.steps.hold("sent")
        async with aiohttp.ClientSession() as gone:
            sender = await gone.ws_connect(a.server.make_url(WS))
            assert json.loads((await sender.receive(timeout=10)).data)["type"] == "history"
            await sender.send_json({"type": "message", "text": "hello"})
            await stored.wait()
            await sent.wait()  # the reply waits behind the message's frame
            sent.released.set()
        # the page is gone (its connection dropped); A's handler still holds its tab
        [tab] = a.adapter._tabs["owner"]

        async def dropped() -> bool:
            return tab.ws._req is None or tab.ws._req.transport is None

        await eventually(dropped, what="A seeing the closed tab's connection drop")
        stored.released.set()
        frames = await _until_reply(other, "hello")
        assert [f["text"] for f in frames if f["type"] == "user"] == ["hello"]
