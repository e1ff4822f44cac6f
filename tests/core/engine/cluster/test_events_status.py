"""D28: events cross processes over NOTIFY, large ones in chunks, in order; D27: what a runtime
shows of its cluster membership (register, leases, the channel holder)."""

from __future__ import annotations

import asyncio
from typing import Any

from core.edge.http.channel_stats import status_suffix
from core.engine.cluster.events import CHUNK, EventBus, make_bus
from core.engine.cluster.status import cluster_view, held_leases, lease_holders
from core.runtime import Runtime
from core.store import RunRecord, Store, TranscriptMessage, now_ms
from tests.conftest import RuntimeFactory
from tests.fakes.model import FakeModelServer, last_user_text, system_text, text


async def test_events_reach_the_other_process_whole_and_in_order(store: Store) -> None:
    a, b = make_bus(store.url), make_bus(store.url)
    got_a: list[tuple[str, dict[str, Any]]] = []
    got_b: list[tuple[str, dict[str, Any]]] = []
    a.subscribe(lambda t, p: got_a.append((t, p)))
    arrived = asyncio.Event()

    def on_b(topic: str, payload: dict[str, Any]) -> None:
        got_b.append((topic, payload))
        if payload.get("last"):
            arrived.set()

    b.subscribe(on_b)
    await a.start()
    await b.start()
    try:
        big = "é" * (3 * CHUNK + 17)  # several NOTIFY frames on PostgreSQL
        sent: list[tuple[str, dict[str, Any]]] = [
            ("run", {"s": "k", "n": 1}),
            ("webchat", {"text": big}),
            ("run", {"s": "k", "n": 2, "last": True}),
        ]
        for topic, payload in sent:
            await a.publish(topic, payload)
        assert got_a == sent  # the publisher's own subscribers, at once, no echo
        if store.dialect == "sqlite":
            assert got_b == []  # in-process: another bus is another process's
            return
        await asyncio.wait_for(arrived.wait(), 10)
        assert got_b == sent
    finally:
        await a.stop()
        await b.stop()


async def test_in_process_bus_survives_a_failing_subscriber() -> None:
    bus = EventBus()
    seen: list[str] = []

    def broken(topic: str, payload: dict[str, Any]) -> None:
        raise RuntimeError("boom")

    bus.subscribe(broken)
    bus.subscribe(lambda t, p: seen.append(t))
    await bus.publish("run", {})
    assert seen == ["run"]


async def _beat(rt: Runtime) -> None:
    await rt.cluster.register.heartbeat()


async def test_the_runtime_lists_itself_and_its_leases(make_runtime: RuntimeFactory) -> None:
    rt = await make_runtime()
    await _beat(rt)
    assert await rt.cluster.leases.acquire("channel:telegram:default")
    view = await cluster_view(rt.cluster)
    (me,) = view["processes"]
    assert me["id"] == rt.cluster.id and me["self"] is True
    assert [lease["name"] for lease in me["leases"]] == ["channel:telegram:default"]
    assert await held_leases(rt.cluster) == ["channel:telegram:default"]
    holders = await lease_holders(rt.cluster)
    ident = rt.cluster.identity
    assert holders == {"channel:telegram:default": f"{ident.host}:{ident.pid}"}
    assert status_suffix({"holder": "vm:42"}).count(" holder=vm:42") == 1
    await rt.cluster.stop()  # a clean stop leaves the register and releases the leases
    assert await rt.cluster.register.live() == []
    assert await rt.cluster.leases.live() == []


async def test_an_adopted_turn_keeps_its_request(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    """A queued run of a dead process is rebuilt from its row: input, chain, extras (D27)."""
    rt = await make_runtime()
    entry = await rt.services.ensure_session("agent:main:adopted")
    run = RunRecord(
        id="r-adopted",
        session_key=entry.key,
        status="queued",
        lane="main",
        deliver=False,
        created_at=now_ms(),
        owner="dead-process",
        meta={
            "traceId": "t-1",
            "hops": 2,
            "request": {"extraSystemPrompt": "EXTRA-PROMPT", "ownerTurn": True},
        },
    )
    await rt.store.enqueue_message(
        entry, TranscriptMessage.text("user", "left behind", now_ms()), run
    )
    fake_model.script(text("picked up"))
    await rt.cluster._adopt(run)
    assert (await rt.runs.wait(run.id, 30)).status == "ok"
    request = fake_model.requests[-1]
    assert last_user_text(request) == "left behind"
    assert "EXTRA-PROMPT" in system_text(request)
    history = await rt.store.history(entry.session_id)
    assert [m.plain_text() for m in history] == ["left behind", "picked up"]
