"""The heartbeat register: which gateway processes are alive (D26).

Each process upserts its row every few seconds. A row whose heartbeat is older than the lease
time belongs to a dead process; :meth:`ProcessRegister.claim_dead` removes such rows with one
DELETE … RETURNING, so exactly one survivor takes over each dead process's work.
"""

from __future__ import annotations

import os

from core.engine.cluster.identity import ProcessIdentity
from core.engine.cluster.leases import Clock
from core.store import Store, now_ms
from core.store.cluster import ProcessInfo


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
        me = self.me
        row = ProcessInfo(me.id, me.pid, me.host, me.started_at, self.clock(), me.pid_space)
        return await self.store.heartbeat_process(row)

    async def leave(self) -> None:
        """A clean stop: drop this process's row."""
        await self.store.remove_process(self.me.id)

    async def expire(self) -> None:
        """A clean stop that leaves work behind: the row looks dead at once, so the next
        survivor's beat claims it (and its queued turns) without waiting out the lease."""
        await self.store.expire_process(self.me.id)

    async def live(self) -> list[ProcessInfo]:
        return await self.store.live_processes(self.clock() - self.dead_after_ms)

    async def claim_dead(self) -> list[ProcessInfo]:
        """Remove and return the processes whose heartbeat is older than the lease time.

        Exactly one caller gets each dead process (the DELETE decides), and that caller
        takes over its work: aborts its running turns, runs its queued ones.
        """
        cutoff = self.clock() - self.dead_after_ms
        return await self.store.claim_processes(self.me.id, silent_before=cutoff)

    async def registered(self) -> list[ProcessInfo]:
        """Every row, live or not (a dead process stays until a survivor claims it)."""
        return await self.store.registered_processes()

    async def claim(self, ids: list[str]) -> list[ProcessInfo]:
        """Remove and return these processes, known dead without waiting for the lease time
        (a pid on this host that no longer exists); the DELETE still picks one claimer."""
        return await self.store.claim_processes(self.me.id, ids=ids)


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


__all__ = ["ProcessInfo", "ProcessRegister", "gone_here"]
