"""The model stack's import, started when someone is about to talk (D54).

pydantic-ai and the OpenAI SDK cost ~40 MiB and ~0.5 s to import, so an idle gateway never pays
for them: the first turn (or a chat page or socket opening) starts the import in a thread, and
turns wait for it rather than race it (two threads importing one package can see each other's
half-initialised modules).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from core.engine.background import Spawn
from core.features.models.resolver import warm_up_imports

if TYPE_CHECKING:
    from core.config import CrosstalkConfig
    from core.features.models.resolver import ModelResolver


class ModelWarmup:
    """One per runtime; :meth:`open` once the runtime runs (before, nothing starts)."""

    def __init__(self, config: CrosstalkConfig, models: ModelResolver, spawn: Spawn) -> None:
        self.config = config
        self.models = models
        self.spawn = spawn
        self._open = False
        self._probe: asyncio.Task[object] | None = None
        self._task: asyncio.Task[object] | None = None

    def open(self, probe: asyncio.Task[object] | None) -> None:
        """The runtime runs: a request may start the import now, after the loopback `probe`."""
        self._open, self._probe = True, probe

    @property
    def task(self) -> asyncio.Task[object] | None:
        """The import, started by the first caller that asks; None before the runtime runs."""
        if self._task is None and self._open:
            self._task = self.spawn(self._run())
        return self._task

    @property
    def started(self) -> bool:
        return self._task is not None

    def soon(self) -> None:
        """Someone is about to talk (a chat page or socket opened): start the import now."""
        _ = self.task

    async def _run(self) -> None:
        if self._probe is not None:
            await asyncio.wait({self._probe})
        if self.models.default_ref(self.config.default_agent_id()) is not None:
            await asyncio.to_thread(warm_up_imports, self.config)  # D50: then the heap settles


__all__ = ["ModelWarmup"]
