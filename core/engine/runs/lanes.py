"""Concurrency lanes: e.g. at most `subagents.maxConcurrent` sub-agent turns at once."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping


class Lanes:
    def __init__(self, limits: Mapping[str, int]) -> None:
        self._sems = {name: asyncio.Semaphore(n) for name, n in limits.items() if n > 0}

    @contextlib.asynccontextmanager
    async def slot(self, lane: str) -> AsyncIterator[None]:
        sem = self._sems.get(lane)
        if sem is None:
            yield
            return
        async with sem:
            yield
