"""Auto-archive of sub-agent sessions (D7): delete them `archiveAfterMinutes` after the spawn.

Unlike the reference, which deletes every record past `archiveAtMs` whether or not its run has
finished, only finished and announced runs are archived; a child still running (or whose
announce is pending) is left for a later sweep, so the archive never cuts off a result.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

from core.engine.background import cancel_and_wait
from core.store import now_ms

if TYPE_CHECKING:
    from core.features.services import Services
    from core.store.subagents import SubagentRecord

log = logging.getLogger(__name__)

DEFAULT_SWEEP_INTERVAL = 60.0


class Archivist(Protocol):
    """What the sweeper needs of the sub-agent registry: its services, the sweeper lease and
    the one way a child session is deleted."""

    services: Services
    sweep_lease: Callable[[str], Awaitable[bool]]

    async def delete_child(self, rec: SubagentRecord) -> None: ...


def archive_at(created_at: int, archive_after_minutes: float | None) -> int | None:
    """`createdAt + max(1, floor(minutes)) × 60000`; 0, negative or non-finite: never."""
    if (
        archive_after_minutes is None
        or not math.isfinite(archive_after_minutes)
        or archive_after_minutes <= 0
    ):
        return None
    return created_at + max(1, math.floor(archive_after_minutes)) * 60_000


class SubagentSweeper:
    def __init__(self, registry: Archivist, interval: float) -> None:
        self.registry = registry
        self.interval = interval
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._loop(), name="subagents:sweeper")

    async def stop(self) -> None:
        task, self._task = self._task, None
        await cancel_and_wait(task)

    def wake(self) -> None:
        """Sweep now (and pick up a changed `interval`)."""
        self._wake.set()

    async def _loop(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.interval)
            self._wake.clear()
            try:
                await self.sweep()
            except Exception:
                log.exception("sub-agent sweep failed")

    async def sweep(self, now: int | None = None) -> int:
        """Archive every due record whose child is idle; returns how many were archived."""
        rt = self.registry.services
        archived = 0
        if not await self.registry.sweep_lease("sweeper"):
            return 0  # another gateway process sweeps now (D29)
        for rec in await rt.store.due_for_archive(now if now is not None else now_ms()):
            if rt.runs.is_active(rec.child_key):
                continue
            await self.registry.delete_child(rec)
            archived += 1
        if archived:
            log.info("archived %d sub-agent session(s)", archived)
        return archived
