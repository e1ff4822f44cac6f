"""Leases and the heartbeat register on SQLite and PostgreSQL, with an injected clock."""

from __future__ import annotations

import asyncio
import os

from core.engine.cluster import Leases, ProcessIdentity, ProcessRegister
from core.store import Store


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000

    def __call__(self) -> int:
        return self.now


async def test_one_holder_until_expiry_then_takeover(store: Store) -> None:
    clock = Clock()
    a = Leases(store, "A", ttl_ms=30_000, clock=clock)
    b = Leases(store, "B", ttl_ms=30_000, clock=clock)
    assert await a.acquire("channel:telegram:default")
    assert not await b.acquire("channel:telegram:default")
    clock.now += 20_000
    assert await a.acquire("channel:telegram:default")  # renewal
    clock.now += 20_000
    assert not await b.acquire("channel:telegram:default")  # renewed 20 s ago: still A's
    assert await a.holder_of("channel:telegram:default") == "A"
    clock.now += 31_000
    assert await a.holder_of("channel:telegram:default") is None
    assert await b.acquire("channel:telegram:default")  # expired: B takes over
    assert not await a.acquire("channel:telegram:default")
    info = await b.live()
    assert [(i.name, i.holder, i.acquired_at) for i in info] == [
        ("channel:telegram:default", "B", clock.now)
    ]


async def test_simultaneous_acquire_has_one_winner(store: Store) -> None:
    clock = Clock()
    holders = [Leases(store, f"P{i}", clock=clock) for i in range(8)]
    won = await asyncio.gather(*(h.acquire("cron") for h in holders))
    assert sum(won) == 1


async def test_release_frees_at_once(store: Store) -> None:
    clock = Clock()
    a, b = Leases(store, "A", clock=clock), Leases(store, "B", clock=clock)
    assert await a.acquire("x") and await a.acquire("y")
    await a.release("x")
    assert await b.acquire("x")
    await a.release_all()
    assert await b.acquire("y")


async def test_dead_process_is_claimed_once(store: Store) -> None:
    clock = Clock()
    regs = [ProcessRegister(store, ProcessIdentity(id=n), clock=clock) for n in "ABC"]
    for r in regs:
        await r.heartbeat()
    assert {p.id for p in await regs[0].live()} == {"A", "B", "C"}
    clock.now += 20_000
    await regs[0].heartbeat()
    await regs[1].heartbeat()
    clock.now += 15_000  # C last beat 35 s ago
    assert {p.id for p in await regs[0].live()} == {"A", "B"}
    claimed = await asyncio.gather(regs[0].claim_dead(), regs[1].claim_dead())
    assert sorted(p.id for c in claimed for p in c) == ["C"]
    await regs[1].leave()
    assert {p.id for p in await regs[0].live()} == {"A"}


def test_a_vanished_pid_of_this_pid_space_is_dead_at_once() -> None:
    import subprocess
    import sys

    from core.engine.cluster.processes import ProcessInfo, gone_here

    me = ProcessIdentity(pid_space="boot-1:ns-1")
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()  # its pid no longer exists

    def info(pid_id: str, pid: int, space: str | None) -> ProcessInfo:
        return ProcessInfo(pid_id, pid, "host", 1, 1, space)

    rows = [
        info("gone", child.pid, "boot-1:ns-1"),
        info("restarted-as-me", me.pid, "boot-1:ns-1"),
        info("alive", os.getppid(), "boot-1:ns-1"),
        info("elsewhere", child.pid, "boot-1:ns-2"),  # another container: cannot tell
        info("unknown", child.pid, None),
        info(me.id, me.pid, "boot-1:ns-1"),
    ]
    assert gone_here(rows, me) == ["gone", "restarted-as-me"]
