"""`GET /api/events` (D183): the console hears of new sessions, deliveries, pairing requests and
cron runs without a reload, from this process and (PostgreSQL) from another one; a console
whose sign-in ended is told so."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestClient, TestServer

from core.config import CrosstalkConfig
from core.edge.http.console.live import FEED
from core.edge.http.console.signin import CLOCK, COOKIE
from core.edge.http.server import build_app
from core.engine.cluster.claim import RUN_TOPIC
from core.runtime import Runtime
from core.store import DeliveryRecord, now_ms
from core.store.pairing import PairingRequest
from tests.conftest import Client, ConfigFactory, RuntimeFactory
from tests.fakes.clock import ManualClock
from tests.pg import fresh_pg_database
from tests.polling import eventually

AUTH = {"Authorization": "Bearer test-token"}


class Events:
    """Reads one server-sent event stream."""

    def __init__(self, resp: aiohttp.ClientResponse) -> None:
        self.resp = resp

    async def next(self, timeout: float = 10.0) -> tuple[str, dict[str, Any]]:
        async def read() -> tuple[str, dict[str, Any]]:
            event, data = "message", ""
            while True:
                line = (await self.resp.content.readline()).decode()
                if not line:
                    raise AssertionError("the stream ended")
                line = line.rstrip("\n")
                if line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("data: "):
                    data = line[6:]
                elif line == "" and data:
                    return event, json.loads(data)

        return await asyncio.wait_for(read(), timeout)

    async def change(self, timeout: float = 10.0) -> list[str]:
        event, data = await self.next(timeout)
        assert event == "change", (event, data)
        topics: list[str] = data["topics"]
        return topics


async def open_events(c: Client, headers: dict[str, str] | None = None) -> Events:
    resp = await c.get("/api/events", headers=AUTH if headers is None else headers)
    assert resp.status == 200 and resp.content_type == "text/event-stream"
    events = Events(resp)
    assert await events.next() == (
        "ready",
        {"topics": ["sessions", "deliveries", "pairing", "cron"]},
    )
    return events


def fast(app: Any, poll: float = 0.05) -> None:
    app[FEED].poll_seconds = poll
    app[FEED].heartbeat_seconds = 0.1


def pairing_request(code: str) -> PairingRequest:
    now = now_ms()
    return PairingRequest(
        code=code,
        channel="telegram",
        account_id="default",
        user_id="7",
        user_name="Mallory",
        chat_id="7",
        thread_id=None,
        deliver_to="7",
        preview="hi",
        status="pending",
        created_at=now,
        expires_at=now + 3_600_000,
    )


async def test_changes_arrive_as_they_happen(make_runtime: RuntimeFactory) -> None:
    rt = await make_runtime()
    app = build_app(rt, "test-token", [])
    fast(app)
    async with TestClient(TestServer(app)) as c:
        assert (await c.get("/api/events")).status == 401
        events = await open_events(c)
        await rt.services.ensure_session("agent:main:telegram:dm:7", channel="telegram")
        assert await events.change() == ["sessions"]
        await rt.store.record_delivery(
            DeliveryRecord(
                kind="reply",
                outcome="suppressed_by_policy",
                text="x",
                created_at=now_ms(),
                session_key="agent:main:telegram:dm:7",
                reason="session override",
            )
        )
        assert await events.change() == ["deliveries"]
        await rt.store.add_request(pairing_request("ABCDEFGH"))
        assert await events.change() == ["pairing"]
        await rt.access.pairing.approve("ABCDEFGH", "telegram")
        assert "pairing" in await events.change()
        from core.config.schema_cron import CronJobConfig

        await rt.cron.add(CronJobConfig(id="nightly", every="1h", message="hi"), source="api")
        assert await events.change() == ["cron"]
        assert app[FEED]._queues  # one console connected


async def test_a_console_whose_sign_in_ended_is_told(make_runtime: RuntimeFactory) -> None:
    rt = await make_runtime({"console": {"sessionHours": 1}})
    app = build_app(rt, "test-token", [])
    fast(app)
    clock = ManualClock()
    app[CLOCK] = clock
    async with TestClient(TestServer(app)) as c:
        resp = await c.post(
            "/console/sign-in",
            data="token=test-token",
            allow_redirects=False,
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
        assert COOKIE in resp.cookies
        events = await open_events(c, headers={})  # the cookie alone (a GET needs no header)
        clock.advance(hours=1)
        assert await events.next() == ("signed-out", {})
        assert await events.resp.content.read() == b""  # and the stream ends


@pytest.mark.postgres
async def test_a_console_on_one_process_hears_of_another_process(
    make_config: ConfigFactory, tmp_path: Any
) -> None:
    """Two gateway processes on one PostgreSQL database: a delivery on B reaches a console
    connected to A at once, through the cluster's `run` event, not only at A's next poll."""
    async with fresh_pg_database() as url:

        def config(name: str) -> CrosstalkConfig:
            return make_config(
                {"gateway": {"database": {"url": url}, "stateDir": str(tmp_path / name)}}
            )

        a, b = Runtime(config("a")), Runtime(config("b"))
        await a.start(probe_models=False)
        await b.start(probe_models=False)
        try:
            app = build_app(a, "test-token", [])
            fast(app, poll=3600.0)  # only an event can wake A's feed within the test
            async with TestClient(TestServer(app)) as c:
                events = await open_events(c)

                async def watching() -> bool:  # A's feed holds its first watermarks
                    return app[FEED]._last is not None

                await eventually(watching, 10, "the feed's first watermarks")
                await b.store.record_delivery(
                    DeliveryRecord(
                        kind="reply",
                        outcome="failed",
                        text="x",
                        created_at=now_ms(),
                        reason="TargetNotFound",
                    )
                )
                await b.cluster.bus.publish(
                    RUN_TOPIC, {"s": "agent:main:main", "r": "r1", "st": "ok"}
                )
                assert await events.change(timeout=10) == ["deliveries"]
        finally:
            await b.stop()
            await a.stop()
