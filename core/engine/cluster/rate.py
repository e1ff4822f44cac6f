"""D8's send rate counted across processes (D29): one row per send, in a rolling minute.

On SQLite the in-memory :class:`core.model.send_limits.SendRateLimiter` counts (one process). On
PostgreSQL every cross-session send is a row (the store's :meth:`count_send`, one transaction
under an advisory lock on the source session, pruning rows older than the window as it counts).
"""

from __future__ import annotations

from core.model.send_limits import SendRateLimiter
from core.store import Store


async def check_send_rate(store: Store, limiter: SendRateLimiter, source_key: str) -> str | None:
    """Record one send from `source_key`; the error text when over the limit (nothing kept)."""
    if store.dialect == "sqlite" or limiter.per_minute <= 0:
        return limiter.check(source_key)
    return await store.count_send(source_key, limiter.per_minute)
