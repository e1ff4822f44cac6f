"""D8's send rate counted across processes (D29): one row per send, in a rolling minute.

On SQLite the in-memory :class:`core.model.send_limits.SendRateLimiter` counts (one process). On
PostgreSQL every cross-session send is a row; a transaction-scoped advisory lock on the source
session makes count-then-insert atomic across processes, and rows older than the window are
pruned by the same statement that counts them.
"""

from __future__ import annotations

from sqlalchemy import Connection, and_, delete, func, insert, select, text

from core.model.send_limits import SendRateLimiter
from core.store import Store, now_ms
from core.store.cluster_tables import ClusterSendEventRow

E = ClusterSendEventRow.__table__  # type: ignore[attr-defined]
WINDOW_MS = 60_000


async def check_send_rate(store: Store, limiter: SendRateLimiter, source_key: str) -> str | None:
    """Record one send from `source_key`; the error text when over the limit (nothing kept)."""
    per_minute = limiter.per_minute
    if store.dialect == "sqlite" or per_minute <= 0:
        return limiter.check(source_key)
    now = now_ms()

    def op(c: Connection) -> str | None:
        c.execute(text("SELECT pg_advisory_xact_lock(hashtext(:k))"), {"k": source_key})
        c.execute(delete(E).where(and_(E.c.source_key == source_key, E.c.at <= now - WINDOW_MS)))
        count, oldest = c.execute(
            select(func.count(), func.min(E.c.at)).where(E.c.source_key == source_key)
        ).one()
        if count >= per_minute:
            retry = (WINDOW_MS - (now - int(oldest))) / 1000
            return (
                f"rate limited: at most {per_minute} cross-session sends per minute "
                f"from {source_key}; retry in {retry:.0f}s"
            )
        c.execute(insert(E).values(source_key=source_key, at=now))
        return None

    return await store.write(op)
