"""D29: what must happen once happens once across gateway processes sharing one database.

Each "process" here is its own service object over one shared database, called concurrently:
the D8 send rate, pairing requests, cron claims and the sweeper lease."""

from __future__ import annotations

import asyncio
from typing import Any

from core.engine.cluster import Leases
from core.engine.cluster.rate import check_send_rate
from core.features.access.pairing import PairingService
from core.model.delivery_context import DeliveryContext
from core.model.inbound import InboundMessage
from core.model.send_limits import SendRateLimiter
from core.store import Store
from core.store.cron import CronJobRecord


async def test_send_rate_counts_across_processes(store: Store) -> None:
    limiters = [SendRateLimiter(3), SendRateLimiter(3)]  # one per process
    if store.dialect == "sqlite":
        limiters[1] = limiters[0]  # SQLite: one process, its memory counts
    results = await asyncio.gather(
        *(check_send_rate(store, limiters[i % 2], "agent:main:main") for i in range(6))
    )
    assert sum(r is None for r in results) == 3
    refused = next(r for r in results if r is not None)
    assert refused.startswith(
        "rate limited: at most 3 cross-session sends per minute from agent:main:main; retry in "
    )
    assert await check_send_rate(store, limiters[0], "agent:main:other") is None


class Gate:
    def __init__(self) -> None:
        self.sent: list[Any] = []

    async def deliver(self, out: Any) -> None:
        self.sent.append(out)


async def test_one_pairing_request_per_sender_across_processes(store: Store) -> None:
    gates = [Gate(), Gate()]
    services = [PairingService(store, g) for g in gates]  # type: ignore[arg-type]
    msg = InboundMessage(
        channel="telegram",
        chat_type="direct",
        chat_id="42",
        sender_id="42",
        text="hi",
        reply_to=DeliveryContext(channel="telegram", to="42"),
    )
    reasons = await asyncio.gather(*(services[i % 2].on_unknown_dm(msg) for i in range(6)))
    assert sorted(reasons) == ["not paired: pairing code sent"] + ["pairing request pending"] * 5
    assert len(await services[0].pending("telegram")) == 1
    assert len(gates[0].sent) + len(gates[1].sent) == 1


def _job(job_id: str) -> CronJobRecord:
    return CronJobRecord(
        id=job_id,
        agent_id="main",
        spec={"id": job_id, "every": "1m", "message": "m"},
        source="api",
        created_at=1,
        updated_at=1,
        next_run_at=10,
    )


async def test_cron_claims_of_live_processes_survive_a_start(store: Store) -> None:
    assert await store.insert_job(_job("a"))
    assert [r.id for r in await store.claim_due(100, "A")] == ["a"]
    assert await store.claim_due(100, "B") == []  # claimed once
    assert await store.release_cron_claims(["A", "B"]) == 0  # A is alive: its firing stays
    assert await store.release_cron_claims(["B"]) == 1  # A died: the job is due again
    assert [r.id for r in await store.claim_due(100, "B")] == ["a"]


async def test_one_sweeper_at_a_time(store: Store) -> None:
    a, b = Leases(store, "A"), Leases(store, "B")
    won = await asyncio.gather(a.acquire("sweeper"), b.acquire("sweeper"))
    assert sorted(won) == [False, True]
