"""This process as a member of the cluster (D26, D27): heartbeats, takeovers, a clean leave.

The runtime makes one node, calls :meth:`ClusterNode.begin` right after the store opens
(instead of aborting every in-flight run: in a cluster those may be another process's live
turns), :meth:`ClusterNode.start` once the adapters are up, and :meth:`ClusterNode.stop` after
its runs are closed. Every quarter of the lease time the node heartbeats and looks for dead
processes; the one survivor that claims a dead process aborts its running turns (the chats get
the restart notice, D12) and runs its queued ones.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from core.engine.channels.supervisor import SoleProcessLease
from core.engine.cluster.claim import TurnClaims
from core.engine.cluster.events import EventBus, make_bus
from core.engine.cluster.identity import ProcessIdentity
from core.engine.cluster.leases import Leases
from core.engine.cluster.processes import ProcessRegister, gone_here
from core.engine.cluster.takeover import Orphans, take_runs
from core.engine.run_env import RunEnv
from core.store import RunRecord, Store, now_ms

if TYPE_CHECKING:
    from pathlib import Path

    from core.engine.runs.ordering import SessionClaims
    from core.model.channel import ChannelLease


@dataclass(frozen=True, slots=True)
class Membership:
    """This process as a member of the cluster (D26), built once by the runtime before the
    parts that depend on it: its identity, its own connection for heartbeats and leases, the
    register, the leases, the event bus and the session claims (the run manager's ordering)."""

    identity: ProcessIdentity
    db: Store
    """Heartbeats and leases get their own connections: a pool busy with turns must not make
    this process look dead (on SQLite there is one process and one file)."""
    register: ProcessRegister
    leases: Leases
    bus: EventBus
    claims: TurnClaims
    ttl_ms: int
    alone: bool
    """SQLite: one process, which holds every lease and owns every run."""

    @classmethod
    def join(cls, store: Store, state_dir: Path, lease_seconds: float) -> Membership:
        identity = ProcessIdentity()
        ttl_ms = int(lease_seconds * 1000)
        alone = store.dialect == "sqlite"
        db = store if alone else Store(store.url, state_dir)
        bus = make_bus(store.url)
        claims = TurnClaims(store, identity.id, bus, poll_seconds=min(5.0, lease_seconds / 4))
        return cls(
            identity=identity,
            db=db,
            register=ProcessRegister(db, identity, ttl_ms=ttl_ms),
            leases=Leases(db, identity.id, ttl_ms=ttl_ms),
            bus=bus,
            claims=claims,
            ttl_ms=ttl_ms,
            alone=alone,
        )

    @property
    def id(self) -> str:
        return self.identity.id

    @property
    def ordering(self) -> SessionClaims | None:
        """The run manager's turn ordering: the claims in a cluster, None alone (D27)."""
        return None if self.alone else self.claims

    @property
    def channel_lease(self) -> ChannelLease:
        """What a channel connection asks before it receives (D36)."""
        return SoleProcessLease(self.id, self.leases.ttl_ms) if self.alone else self.leases

    async def sweep_lease(self, name: str) -> bool:
        """A singleton job's lease (the archive sweeper, D29); always ours alone."""
        return True if self.alone else await self.leases.acquire(name)

    async def live_ids(self) -> list[str] | None:
        """The processes whose claims (announces, cron firings) stay at a start; None on
        SQLite, where every claim was left by a previous process (D29)."""
        if self.alone:
            return None
        return [self.id, *(p.id for p in await self.register.live())]


class TakeoverEnv(RunEnv, Protocol):
    """What a node uses to take over a dead process's turns (D30): the store, the gate (the
    restart notice), the run manager (adopted turns), the tool context of an adopted run."""

    @property
    def store(self) -> Store: ...


log = logging.getLogger(__name__)


class ClusterNode:
    """Heartbeats, takeovers and a clean leave for one :class:`Membership`."""

    def __init__(
        self,
        membership: Membership,
        env: TakeoverEnv,
        *,
        resume_announces: Callable[[], Awaitable[None]],
    ) -> None:
        self.membership = membership
        self.env = env
        self.resume_announces = resume_announces
        """The sub-agent registry's: the dead's interrupted announces happen here (D29)."""
        self._loop: asyncio.Task[None] | None = None
        self.held: list[str] = []
        """Lease names this process held at its last heartbeat (for `/metrics`)."""
        self._beat = False
        self._left: list[RunRecord] = []  # SQLite: turns queued before a restart (D81)

    @property
    def id(self) -> str:
        return self.membership.id

    def held_leases(self) -> list[str]:
        """Lease names this process held at its last heartbeat (read by `/metrics`)."""
        return self.held

    @property
    def identity(self) -> ProcessIdentity:
        return self.membership.identity

    @property
    def register(self) -> ProcessRegister:
        return self.membership.register

    @property
    def leases(self) -> Leases:
        return self.membership.leases

    @property
    def bus(self) -> EventBus:
        return self.membership.bus

    @property
    def claims(self) -> TurnClaims:
        return self.membership.claims

    @property
    def alone(self) -> bool:
        return self.membership.alone

    @property
    def ttl_ms(self) -> int:
        return self.membership.ttl_ms

    async def begin(self) -> list[RunRecord]:
        """After the store opens: connect the event bus; on SQLite take what the previous
        process left in flight as a survivor does (D27, D81): its running turns are aborted
        and returned for the restart notice, its queued ones kept for :meth:`run_left`."""
        await self.bus.start()
        if not self.alone:
            return []
        owners = await self.env.store.inflight_owners()
        aborted, self._left = await take_runs(
            self.env.store,
            self.id,
            Orphans([o for o in owners if o != self.id], unowned_before=now_ms() + 1),
        )
        return aborted

    async def run_left(self) -> int:
        """Run the turns the previous process accepted but never started (SQLite, D81): once
        the adapters are up and the run listeners set, so their replies reach their chats."""
        left, self._left = self._left, []
        for run in left:
            await self._adopt(run)
        if left:
            log.warning("running %d turn(s) queued before the restart", len(left))
        return len(left)

    def start(self) -> None:
        """Once the adapters are up (and so the HTTP site): heartbeat and watch the others."""
        self._loop = asyncio.get_running_loop().create_task(self._watch(), name="cluster")

    async def stop(self) -> None:
        """A clean stop: no more heartbeats, release every lease, and leave the register (on
        PostgreSQL: mark this row dead, so a survivor runs the turns left queued, D27)."""
        if self._loop is not None:
            self._loop.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._loop
        try:
            if self.alone:
                await self.register.leave()
            else:  # its queued turns stay: a survivor claims this row at its next beat
                await self.register.expire()
            await self.leases.release_all()
        except Exception as exc:  # the store may be gone; the lease time covers it
            log.warning("could not leave the cluster cleanly: %s", exc)
        await self.bus.stop()
        if self.membership.db is not self.env.store:
            await self.membership.db.close()

    async def _watch(self) -> None:
        interval = self.ttl_ms / 4000
        last_beat = 0.0
        loop = asyncio.get_running_loop()
        while True:
            try:
                if not await self.register.heartbeat() and self._beat:
                    log.error(
                        "this process was silent for longer than cluster.leaseSeconds "
                        "and another one took over its turns"
                    )
                # after a silence of our own (the database was away, the loop stalled) the
                # others were silent too: give them one beat before declaring them dead
                if loop.time() - last_beat < self.ttl_ms / 1000 or not self._beat:
                    await self.take_over()
                last_beat = loop.time()
                self.held = [
                    lease.name for lease in await self.leases.live() if lease.holder == self.id
                ]
            except Exception:
                log.exception("cluster heartbeat failed")
            self._beat = True
            await asyncio.sleep(interval)  # the heartbeat period itself, not a stand-in

    async def take_over(self) -> int:
        """Claim dead processes and take their turns; returns how many runs were taken."""
        dead = await self.register.claim_dead()
        dead += await self.register.claim(await self._gone_here())
        if self.alone:
            return 0
        if dead:  # their channel connections and singleton jobs are free at once (D36)
            await self.leases.release_dead([d.id for d in dead])
            log.warning(
                "taking over from dead process(es): %s",
                ", ".join(f"{d.id} (pid {d.pid} on {d.host})" for d in dead),
            )
        aborted, adopted = await take_runs(
            self.env.store,
            self.id,
            Orphans([d.id for d in dead], unowned_before=now_ms() - self.ttl_ms),
        )
        for run in aborted:
            await self.claims.ended(run)
        if aborted:
            from core.engine.outbound.restart_notice import notify_aborted_chats

            self.env.spawn(notify_aborted_chats(self.env.gate, aborted))
        for run in adopted:
            await self._adopt(run)
        if dead or aborted or adopted:
            await self._release_claims_of_the_dead()
        return len(aborted) + len(adopted)

    async def _release_claims_of_the_dead(self) -> None:
        """Announces and cron firings the dead left half-done happen again, here (D29)."""
        live = await self.membership.live_ids()
        await self.env.store.release_cron_claims(live)
        await self.env.store.release_stale_claims(live)
        await self.resume_announces()  # records the aborted children, announces once

    async def _gone_here(self) -> list[str]:
        """Registered processes known dead at once (a kill -9 and a restart on this host)."""
        return gone_here(await self.register.registered(), self.identity)

    async def _adopt(self, run: RunRecord) -> None:
        from core.engine.runs.rebuild import rebuild_request

        store = self.env.store
        entry = await store.get_session(run.session_key)
        if entry is None:
            await store.update_run(
                run.id, status="aborted", ended_at=now_ms(), error="session was deleted"
            )
            await self.claims.ended(run)
            return
        request = await rebuild_request(store, run, entry, self.env.context_for)
        self.env.runs.adopt(run, request)
