"""Cron and webhook replies for the web chat (D136): kept when no tab is open and shown when
one opens, labelled with their job or hook; `lastStatus` says `error` when a reply could not be
delivered at all."""

from __future__ import annotations

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
from tests.fakes.model import FakeModelServer
from tests.polling import eventually

AUTH = {"Authorization": "Bearer test-token"}
WEBCHAT = {"channel": "webchat", "to": "owner"}
EXTRA = {
    "cron": {
        "jobs": [
            {"id": "morning", "every": "1h", "message": "morning summary", "deliver": WEBCHAT},
            {
                "id": "lost",
                "every": "1h",
                "message": "to nowhere",
                "deliver": {"channel": "testchat", "to": "x"},
            },
        ]
    },
    "hooks": {
        "mappings": [
            {
                "id": "ci",
                "path": "ci",
                "token": "hook-secret-123",
                "messageTemplate": "CI {{ body.status }}",
                "deliver": WEBCHAT,
            }
        ]
    },
}

Gateway = tuple[aiohttp.ClientSession, TestServer, Runtime]


@pytest.fixture
async def gateway(
    make_config: ConfigFactory, fake_model: FakeModelServer, db: dict[str, Any]
) -> AsyncIterator[Gateway]:
    rt = Runtime(make_config(EXTRA | db))
    rt.cron.run_loop = False
    adapter = WebchatAdapter.for_gateway(rt.pages)
    await rt.start(adapters=[adapter], probe_models=False)
    server = TestServer(build_app(rt, "test-token", [adapter]))
    await server.start_server()
    try:
        async with aiohttp.ClientSession() as http:
            yield http, server, rt
    finally:
        await server.close()
        await rt.stop()


async def _fired(http: aiohttp.ClientSession, server: TestServer, job: str) -> dict[str, Any]:
    resp = await http.post(server.make_url(f"/api/cron/{job}/run"), headers=AUTH)
    assert resp.status == 202, await resp.text()

    async def detail() -> dict[str, Any] | None:
        got = await (await http.get(server.make_url(f"/api/cron/{job}"), headers=AUTH)).json()
        return dict(got) if got.get("lastStatus") else None

    return await eventually(detail, what=f"{job} fired")


async def _history(http: aiohttp.ClientSession, server: TestServer) -> list[tuple[str, str]]:
    """What a page that opens now shows: (text, label) of each row of its history frame (always
    its first frame, D190)."""
    async with http.ws_connect(server.make_url("/ws?token=test-token")) as ws:
        history = json.loads((await ws.receive(timeout=5)).data)
        assert history["type"] == "history"
        return [(m["text"], m.get("label") or "") for m in history["messages"]]


async def _shown(http: aiohttp.ClientSession, server: TestServer) -> list[tuple[str, str]] | None:
    """What a page that opens now shows, or None when it shows nothing (to poll with)."""
    return await _history(http, server) or None


async def test_a_cron_reply_with_no_tab_open_is_kept_and_shown_labelled(
    gateway: Gateway,
) -> None:
    http, server, _ = gateway
    job = await _fired(http, server, "morning")  # no tab is open
    assert job["lastStatus"] == "ok" and job["runs"][0]["delivery"] == "delivered"
    async with http.ws_connect(server.make_url("/ws?token=test-token")) as ws:
        history = json.loads((await ws.receive(timeout=5)).data)
        assert history["type"] == "history"
        assert [(m["text"], m.get("label")) for m in history["messages"]] == [
            ("echo: morning summary", "⏰ cron job morning")
        ]


async def test_a_webhook_reply_to_an_open_tab_names_its_hook(gateway: Gateway) -> None:
    http, server, _ = gateway
    async with http.ws_connect(server.make_url("/ws?token=test-token")) as ws:
        assert json.loads((await ws.receive(timeout=5)).data)["type"] == "history"
        resp = await http.post(
            server.make_url("/hooks/ci"),
            json={"status": "green"},
            headers={"Authorization": "Bearer hook-secret-123"},
        )
        assert resp.status == 202
        frame = json.loads((await ws.receive(timeout=10)).data)
        assert frame == {
            "type": "message",
            "role": "assistant",
            "text": "echo: CI green",
            "label": "🪝 webhook ci",
            "deliveryId": frame["deliveryId"],  # what a history shows it by (D190)
        }
    # and a page that opens later shows it among the conversation, labelled the same (its
    # delivery counts from its opening, before the frame went out: no wait, D190)
    assert await _history(http, server) == [("echo: CI green", "🪝 webhook ci")]


async def test_last_status_is_error_when_the_reply_was_not_delivered(gateway: Gateway) -> None:
    http, server, _ = gateway
    job = await _fired(http, server, "lost")
    assert job["lastStatus"] == "error" and job["runs"][0]["delivery"] == "failed"
    assert job["lastError"] == "reply not delivered: channel not connected: testchat"


async def test_after_new_a_reload_shows_only_what_the_new_session_was_sent(
    gateway: Gateway,
) -> None:
    """A cron reply kept before `/new` belonged to the session `/new` ended; one after it shows."""
    http, server, _ = gateway
    await _fired(http, server, "morning")
    assert await _history(http, server) == [("echo: morning summary", "⏰ cron job morning")]
    async with http.ws_connect(server.make_url("/ws?token=test-token")) as ws:
        assert json.loads((await ws.receive(timeout=5)).data)["type"] == "history"
        await ws.send_json({"type": "message", "text": "/new"})
        reply = json.loads((await ws.receive(timeout=10)).data)
        assert reply["text"].startswith("⚙️ New session started"), reply
    assert await _history(http, server) == []
    resp = await http.post(server.make_url("/api/cron/morning/run"), headers=AUTH)
    assert resp.status == 202
    assert await eventually(lambda: _shown(http, server), what="the cron reply after /new") == [
        ("echo: morning summary", "⏰ cron job morning")
    ]
