"""How a run manager orders the turns of a session across processes (D27).

Alone (SQLite, or a test), a process orders its own turns: the manager's per-session queue is
enough. In a cluster, :class:`core.engine.cluster.claim.TurnClaims` is the strategy: a turn
starts only when its session is free everywhere. The manager sees only this protocol, so the
runs package does not depend on the cluster.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from core.model.records import RunRecord, SessionEntry
from core.store.cluster import ClaimResult


class SessionClaims(Protocol):
    """Claims turns for this process; one instance per run manager."""

    def on_abort(self, handler: Callable[[str, str], None]) -> None:
        """Call `handler(session_key, reason)` when another process stops a session."""
        ...

    def generation(self, session_key: str) -> int:
        """A counter that moves on every ended turn of the session; read before claiming."""
        ...

    async def claim(self, run: RunRecord, entry: SessionEntry) -> ClaimResult: ...

    async def wait(self, session_key: str, since: int, timeout: float | None = None) -> None: ...

    async def ended(self, run: RunRecord) -> None: ...

    async def abort_elsewhere(self, session_key: str, reason: str) -> int: ...

    def on_interrupt(self, handler: Callable[[str], None]) -> None:
        """Call `handler(session_key)` when a message for the session arrived on another
        process under `interrupt` (D127): its running turn here stops."""
        ...

    async def interrupt_elsewhere(self, session_key: str) -> None: ...

    def on_steer(self, handler: Callable[[str], None]) -> None:
        """Call `handler(session_key)` when a `sessions_send` steer for the session was queued
        on another process (D114): a turn of it running here takes it in."""
        ...

    async def steer_elsewhere(self, session_key: str) -> None: ...


__all__ = ["ClaimResult", "SessionClaims"]
