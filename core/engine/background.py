"""Background jobs that are tracked, logged when they fail, and cancelled on shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

log = logging.getLogger(__name__)

Spawn = Callable[[Awaitable[Any]], "asyncio.Task[Any]"]
"""What :meth:`BackgroundTasks.spawn` is, for a collaborator that only starts jobs."""


async def cancel_and_wait(task: asyncio.Task[Any] | None) -> None:
    """Cancel a loop task and wait for it to end: its CancelledError is the expected end, any
    other error still surfaces."""
    if task is None:
        return
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


class BackgroundTasks:
    """A set of fire-and-forget tasks; a failure is logged, never lost or silently dropped."""

    def __init__(self, what: str) -> None:
        self.what = what
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, job: Awaitable[Any]) -> asyncio.Task[Any]:
        task: asyncio.Task[Any] = asyncio.ensure_future(job)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("%s task failed", self.what, exc_info=task.exception())

    def named(self, name: str) -> list[asyncio.Task[Any]]:
        """Running tasks whose coroutine function is `name` (lets callers await a flow)."""
        return [t for t in list(self._tasks) if getattr(t.get_coro(), "__name__", "") == name]

    async def cancel_all(self) -> None:
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
