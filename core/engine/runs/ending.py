"""How a run ends: its outcome recorded and its waiters and listeners told, a pause for people,
an abort (here or, through the claims, elsewhere), a hand-over at a clean stop; apart from the
manager's queueing and turn execution so each module stays small."""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from core.engine.observability.metrics import Metrics
from core.engine.runs.contract import (
    Pause,
    PauseListener,
    RunListener,
    RunOutcome,
    RunRequest,
    TurnResult,
)
from core.model.approvals import AWAITING
from core.model.records import RunPatch, TurnWrite
from core.store import RunRecord, Store, now_ms
from core.store.runs import MERGED

if TYPE_CHECKING:
    from core.engine.runs.ordering import SessionClaims

log = logging.getLogger("core.engine.runs.manager")
"""The manager's logger: these lines keep the name they had when this code was part of it."""


@dataclass(slots=True)
class Pending:
    run: RunRecord
    request: RunRequest
    done: asyncio.Future[RunOutcome]
    session_was_aborted: bool = False  # its session's previous run died with the process
    write: TurnWrite | None = None  # what the turn stores with its end (D41)
    pause: Pause | None = None  # the questions the turn stopped for (D72)
    followers: list[Pending] = field(default_factory=list)  # merged into this turn (D75)


class RunEnding:
    """The part of :class:`core.engine.runs.manager.RunManager` that ends runs; the manager
    sets these attributes in its `__init__`."""

    store: Store
    metrics: Metrics
    owner: str | None
    claims: SessionClaims | None
    _queues: dict[str, deque[Pending]]
    _active: dict[str, tuple[Pending, asyncio.Task[TurnResult]]]
    _abort_reasons: dict[str, str]
    _admitting: dict[str, Pending]
    _pending: dict[str, Pending]
    _listeners: list[RunListener]
    _pause_listeners: list[PauseListener]
    _aborts: set[asyncio.Future[int]]

    async def abort_session(
        self, session_key: str, reason: str = "aborted", *, here_only: bool = False
    ) -> int:
        """Abort the running turn and drop the queued ones; returns how many were stopped.

        In a cluster the turns other processes run for the session are stopped too (D27),
        unless `here_only` (this process stopping)."""
        stopped = 0
        queue = self._queues.get(session_key)
        while queue:
            pending = queue.popleft()
            await self._finish(pending, RunOutcome(pending.run.id, "aborted", reason))
            stopped += 1
        admitting = self._admitting.pop(session_key, None)
        if admitting is not None and not admitting.done.done():
            await self._finish(admitting, RunOutcome(admitting.run.id, "aborted", reason))
            stopped += 1
        active = self._active.get(session_key)
        if active is not None:
            self._abort_reasons[active[0].run.id] = reason  # the run's outcome says why
            active[1].cancel()
            stopped += 1
        if self.claims is not None and not here_only:
            stopped += await self.claims.abort_elsewhere(session_key, reason)
        return stopped

    def interrupt_here(self, session_key: str) -> None:
        """A message for the session arrived on another process under `interrupt` (D127): the
        turn running here stops as for a local one; what is queued stays for the next turn."""
        active = self._active.get(session_key)
        if active is not None:
            active[1].cancel()

    def abort_here(self, session_key: str, reason: str) -> None:
        """Another process asked to stop this session's turns (its `/stop`, D27)."""
        task = asyncio.ensure_future(self.abort_session(session_key, reason, here_only=True))
        self._aborts.add(task)
        task.add_done_callback(self._aborts.discard)

    def _hand_over(self) -> None:
        """A clean stop in a cluster: turns accepted but not started stay `queued` in the
        store for a survivor (or the next start) to run (D27); only local waiters end."""
        for key in list(self._queues):
            queue = self._queues[key]
            while queue:
                pending = queue.popleft()
                self._pending.pop(pending.run.id, None)
                if not pending.done.done():
                    pending.done.set_result(
                        RunOutcome(pending.run.id, "aborted", "gateway stopping")
                    )

    async def _pause(self, pending: Pending, outcome: RunOutcome) -> None:
        """The run waits for people (D72): stored `awaiting_approval` with its questions; it
        holds up nothing, and whichever process decides its last question resumes it."""
        run, pause = pending.run, pending.pause
        assert pause is not None
        fence = self.owner if self.claims is not None else None
        paused = await self.store.pause_run(run.id, pause.meta, pause.questions, fence_owner=fence)
        if paused:
            run.status, run.meta = AWAITING, pause.meta
        else:
            log.error("run %s was taken over by another process before it paused", run.id)
            outcome = RunOutcome(run.id, "aborted", "taken over by another process")
        if self.claims is not None:
            await self.claims.ended(run)
        self._pending.pop(run.id, None)
        if not pending.done.done():
            pending.done.set_result(outcome)
        if not paused:
            return
        for listener in self._pause_listeners:
            try:
                await listener(run, pending.request, pause.questions)
            except Exception:
                log.exception("pause listener failed for %s", run.id)

    async def _finish(self, pending: Pending, outcome: RunOutcome) -> None:
        if outcome.status == AWAITING:
            await self._pause(pending, outcome)
            return
        run = pending.run
        if outcome.error == MERGED:  # another process's turn took this message (D75)
            self._pending.pop(run.id, None)
            if not pending.done.done():
                pending.done.set_result(outcome)
            return
        run.status, run.error, run.ended_at = outcome.status, outcome.error, now_ms()
        fields = RunPatch(
            status=run.status,
            error=run.error,
            ended_at=run.ended_at,
            input_tokens=run.input_tokens,
            output_tokens=run.output_tokens,
            total_tokens=run.total_tokens,
        )
        write = pending.write if outcome.status == "ok" else None
        fence = self.owner if self.claims is not None else None
        if not await self.store.finish_run(run, write, fence_owner=fence, **fields):
            # another process took this run over while we were presumed dead (D27): its
            # outcome is theirs to record and deliver
            log.error(
                "run %s was taken over by another process; its outcome here is dropped", run.id
            )
            self._pending.pop(run.id, None)
            if not pending.done.done():
                pending.done.set_result(
                    RunOutcome(run.id, "aborted", "taken over by another process")
                )
            return
        if pending.session_was_aborted and run.status != "aborted":
            # a later turn finished: the session's last run is no longer the aborted one
            await self.store.clear_aborted_last_run(run.session_key)
        if run.started_at is None and run.input_message_id is not None:
            entry = await self.store.get_session(run.session_key)
            if entry is not None:  # never started (aborted in the queue): still kept, in order
                await self.store.place_message(entry, run.input_message_id)
        self.metrics.turn_finished(run)
        if self.claims is not None:
            await self.claims.ended(run)
        if not pending.done.done():
            pending.done.set_result(outcome)
        self._pending.pop(run.id, None)
        for follower in pending.followers:  # merged into this turn (D75): its outcome is theirs
            if not follower.done.done():
                follower.done.set_result(outcome)
        for listener in self._listeners:
            try:
                await listener(run, pending.request, outcome)
            except Exception:
                log.exception("run listener failed for %s", run.id)
