"""Named leases in the database: one holder per resource, taken over once it expires (D26).

A lease is one row. Taking or renewing it is a single conditional upsert, so two processes
asking at once cannot both win: the row is granted when it is absent, already ours, or expired.
The clock is injectable so tests move time instead of sleeping.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, and_, delete, or_, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from core.store.cluster_tables import ClusterLeaseRow
from core.store.store import Store, now_ms

L = ClusterLeaseRow.__table__  # type: ignore[attr-defined]

Clock = Callable[[], int]
"""Milliseconds since the epoch."""


@dataclass(frozen=True, slots=True)
class LeaseInfo:
    name: str
    holder: str
    acquired_at: int
    expires_at: int


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
        now = self.clock()
        values = {
            "name": name,
            "holder": self.holder,
            "acquired_at": now,
            "expires_at": now + self.valid_ms,
        }

        def op(c: Connection) -> bool:
            ins: Any = pg_insert(L) if c.dialect.name == "postgresql" else sqlite_insert(L)
            ins = ins.values(**values)
            stmt = ins.on_conflict_do_update(
                index_elements=["name"],
                set_={
                    "holder": ins.excluded.holder,
                    "expires_at": ins.excluded.expires_at,
                    "acquired_at": _keep_acquired(ins),
                },
                where=or_(L.c.holder == ins.excluded.holder, L.c.expires_at < now),
            ).returning(L.c.holder)
            row = c.execute(stmt).first()
            return row is not None and row[0] == self.holder

        return bool(await self.store.write(op))

    async def release(self, name: str) -> None:
        """Give `name` up at once (a clean stop), so another process need not wait it out."""
        await self.store.write(
            lambda c: c.execute(delete(L).where(and_(L.c.name == name, L.c.holder == self.holder)))
        )

    async def release_all(self) -> None:
        await self.store.write(lambda c: c.execute(delete(L).where(L.c.holder == self.holder)))

    async def release_dead(self, holders: list[str]) -> int:
        """Free the leases of processes found dead, so a waiting one takes them at once."""
        if not holders:
            return 0
        stmt = delete(L).where(L.c.holder.in_(holders))
        return int(await self.store.write(lambda c: c.execute(stmt).rowcount) or 0)

    async def holder_of(self, name: str) -> str | None:
        """The live holder of `name`, or None when it is free or expired."""
        now = self.clock()
        row = await self.store.read(
            lambda c: c.execute(
                select(L.c.holder).where(and_(L.c.name == name, L.c.expires_at >= now))
            ).first()
        )
        return str(row[0]) if row else None

    async def live(self) -> list[LeaseInfo]:
        """Every unexpired lease in the cluster, by name."""
        now = self.clock()
        rows = await self.store.read(
            lambda c: c.execute(
                select(L.c.name, L.c.holder, L.c.acquired_at, L.c.expires_at)
                .where(L.c.expires_at >= now)
                .order_by(L.c.name)
            ).all()
        )
        return [LeaseInfo(*r) for r in rows]


def _keep_acquired(ins: Any) -> Any:
    """A renewal keeps the original `acquired_at`; a takeover starts a new one."""
    from sqlalchemy import case

    return case(
        (L.c.holder == ins.excluded.holder, L.c.acquired_at), else_=ins.excluded.acquired_at
    )
