"""Named leases in the database: one holder per resource, taken over once it expires (D26).

A lease is one row. Taking or renewing it is a single conditional upsert, so two processes
asking at once cannot both win: the row is granted when it is absent, already ours, or expired.
The clock is injectable so tests move time instead of sleeping.
"""

from __future__ import annotations

from collections.abc import Callable

from core.store import Store, now_ms
from core.store.cluster import LeaseInfo

Clock = Callable[[], int]
"""Milliseconds since the epoch."""


class Leases:
    """Leases held on behalf of one process (``holder``).

    ``ttl_ms`` (``cluster.leaseSeconds``) bounds a takeover: a row is granted for five sixths
    of it, and whoever waits for a lease asks again every sixth of it (:attr:`retry_ms`), so
    a dead holder's lease changes hands within the lease time. Holders renew every third.
    """

    def __init__(
        self, store: Store, holder: str, *, ttl_ms: int = 30_000, clock: Clock = now_ms
    ) -> None:
        self.store = store
        self.holder = holder
        self.ttl_ms = ttl_ms
        self.valid_ms = ttl_ms * 5 // 6
        self.retry_ms = ttl_ms - self.valid_ms
        self.clock = clock

    async def acquire(self, name: str) -> bool:
        """Take or renew `name`; True when this process holds it until now + ttl."""
        return await self.store.acquire_lease(name, self.holder, self.clock(), self.valid_ms)

    async def release(self, name: str) -> None:
        """Give `name` up at once (a clean stop), so another process need not wait it out."""
        await self.store.release_leases([self.holder], name)

    async def release_all(self) -> None:
        await self.store.release_leases([self.holder])

    async def release_dead(self, holders: list[str]) -> int:
        """Free the leases of processes found dead, so a waiting one takes them at once."""
        return await self.store.release_leases(holders)

    async def holder_of(self, name: str) -> str | None:
        """The live holder of `name`, or None when it is free or expired."""
        return await self.store.lease_holder(name, self.clock())

    async def live(self) -> list[LeaseInfo]:
        """Every unexpired lease in the cluster, by name."""
        return await self.store.live_leases(self.clock())


__all__ = ["Clock", "LeaseInfo", "Leases"]
