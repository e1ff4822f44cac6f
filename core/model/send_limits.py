"""Decision D8: bounded cross-session traffic.

A per-source-session rate limit (rolling minute) and a hop budget carried by every chain of
`sessions_send`/`sessions_spawn`, so loops among three or more agents end, not only ping-pong.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Awaitable, Callable

from core.model.tool_context import ToolContext


class SendRateLimiter:
    """At most `per_minute` cross-session sends from one source session in any 60 s window."""

    def __init__(
        self, per_minute: int, *, counter: Callable[[str], Awaitable[str | None]] | None = None
    ) -> None:
        self.per_minute = per_minute
        self._events: dict[str, deque[float]] = {}
        self.counter = counter
        """On PostgreSQL: the count kept in the database, shared by every gateway process
        (D29); without it this process's own window counts."""

    async def acheck(self, source_key: str) -> str | None:
        """:meth:`check`, counted across processes when a shared counter is set."""
        if self.counter is not None:
            return await self.counter(source_key)
        return self.check(source_key)

    def check(self, source_key: str, now: float | None = None) -> str | None:
        """Record one send; return the error text when over the limit (nothing recorded)."""
        if self.per_minute <= 0:
            return None
        t = time.monotonic() if now is None else now
        window = self._events.setdefault(source_key, deque())
        while window and t - window[0] >= 60.0:
            window.popleft()
        if len(window) >= self.per_minute:
            retry = 60.0 - (t - window[0])
            return (
                f"rate limited: at most {self.per_minute} cross-session sends per minute "
                f"from {source_key}; retry in {retry:.0f}s"
            )
        window.append(t)
        return None


def hop_error(ctx: ToolContext, budget: int) -> str | None:
    """The error text when this call would exceed the chain's hop budget."""
    if ctx.hops + 1 > budget:
        return (
            f"hop budget exhausted: this chain of agent-to-agent sends and spawns already "
            f"made {ctx.hops} hops (limit {budget}, trace {ctx.trace_id})"
        )
    return None
