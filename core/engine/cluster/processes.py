"""The heartbeat register: which gateway processes are alive (D26).

Each process upserts its row every few seconds. A row whose heartbeat is older than the lease
time belongs to a dead process; :meth:`ProcessRegister.claim_dead` removes such rows with one
DELETE … RETURNING, so exactly one survivor takes over each dead process's work.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from sqlalchemy import Connection, delete, select

from core.engine.cluster.identity import ProcessIdentity
from core.engine.cluster.leases import Clock
from core.store.cluster_tables import ClusterProcessRow
from core.store.store import Store, now_ms

P = ClusterProcessRow.__table__  # type: ignore[attr-defined]
_COLS = (P.c.id, P.c.pid, P.c.host, P.c.started_at, P.c.heartbeat_at, P.c.pid_space)


@dataclass(frozen=True, slots=True)
class ProcessInfo:
    id: str
    pid: int
    host: str
    started_at: int
    heartbeat_at: int
    pid_space: str | None = None


class ProcessRegister:
    def __init__(
        self, store: Store, me: ProcessIdentity, *, ttl_ms: int = 30_000, clock: Clock = now_ms
    ) -> None:
        self.store = store
        self.me = me
        self.ttl_ms = ttl_ms
        self.clock = clock
        self.dead_after_ms = ttl_ms * 3 // 4
        """Silence after which a process counts as dead: heartbeats and checks run every
        quarter of the lease time, so a death is acted on within the lease time (D26) while
        a live process, beating every quarter, keeps half of it as a margin."""

    async def heartbeat(self) -> bool:
        """Refresh this process's row, inserting it when missing; False when it was missing
        (the first beat, or a survivor declared this process dead and took its work)."""
        from core.store.store import _insert_ignore

        now = self.clock()
        me = self.me

        def op(c: Connection) -> bool:
            if c.execute(P.update().where(P.c.id == me.id).values(heartbeat_at=now)).rowcount:
                return True
            _insert_ignore(
                c,
                P,
                {
                    "id": me.id,
                    "pid": me.pid,
                    "host": me.host,
                    "started_at": me.started_at,
                    "heartbeat_at": now,
                    "pid_space": me.pid_space or None,
                },
                ["id"],
            )
            return False

        return bool(await self.store.write(op))

    async def leave(self) -> None:
        """A clean stop: drop this process's row."""
        await self.store.write(lambda c: c.execute(delete(P).where(P.c.id == self.me.id)))

    async def expire(self) -> None:
        """A clean stop that leaves work behind: the row looks dead at once, so the next
        survivor's beat claims it (and its queued turns) without waiting out the lease."""
        await self.store.write(
            lambda c: c.execute(P.update().where(P.c.id == self.me.id).values(heartbeat_at=0))
        )

    async def live(self) -> list[ProcessInfo]:
        cutoff = self.clock() - self.dead_after_ms
        rows = await self.store.read(
            lambda c: c.execute(
                select(*_COLS).where(P.c.heartbeat_at >= cutoff).order_by(P.c.started_at)
            ).all()
        )
        return [ProcessInfo(*r) for r in rows]

    async def claim_dead(self) -> list[ProcessInfo]:
        """Remove and return the processes whose heartbeat is older than the lease time.

        Exactly one caller gets each dead process (the DELETE decides), and that caller
        takes over its work: aborts its running turns, runs its queued ones.
        """
        cutoff = self.clock() - self.dead_after_ms
        rows = await self.store.write(
            lambda c: c.execute(
                delete(P).where(P.c.heartbeat_at < cutoff, P.c.id != self.me.id).returning(*_COLS)
            ).all()
        )
        return [ProcessInfo(*r) for r in rows]

    async def registered(self) -> list[ProcessInfo]:
        """Every row, live or not (a dead process stays until a survivor claims it)."""
        rows = await self.store.read(lambda c: c.execute(select(*_COLS)).all())
        return [ProcessInfo(*r) for r in rows]

    async def claim(self, ids: list[str]) -> list[ProcessInfo]:
        """Remove and return these processes, known dead without waiting for the lease time
        (a pid on this host that no longer exists); the DELETE still picks one claimer."""
        if not ids:
            return []
        rows = await self.store.write(
            lambda c: c.execute(
                delete(P).where(P.c.id.in_(ids), P.c.id != self.me.id).returning(*_COLS)
            ).all()
        )
        return [ProcessInfo(*r) for r in rows]


def gone_here(processes: list[ProcessInfo], me: ProcessIdentity) -> list[str]:
    """Ids of registered processes in this kernel boot and PID namespace whose pid no longer
    exists (or is now this process): dead without waiting out the lease time (D27)."""
    return [
        p.id
        for p in processes
        if p.id != me.id and me.pid_space and p.pid_space == me.pid_space and not _pid_alive(p.pid)
    ]


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return False  # that pid is now us: the registered process is gone
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True
