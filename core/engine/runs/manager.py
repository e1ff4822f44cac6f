"""Agent runs: one turn per session at a time, in arrival order, persisted end to end.

A run is created `queued` in the store before anything else happens, so a waiter that lost its
connection (or another process after a restart) can always learn how it ended. Runs still in
flight when a process died are marked `aborted` by :meth:`RunManager.recover`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from core.engine.observability.logs import bind_turn
from core.engine.observability.metrics import DISCARD, Metrics
from core.engine.runs.contract import (
    DeltaSink,
    PauseListener,
    RunListener,
    RunOutcome,
    RunRequest,
    TurnExecutor,
    TurnResult,
)
from core.engine.runs.ending import Pending, RunEnding
from core.engine.runs.lanes import Lanes
from core.engine.runs.rebuild import request_extras
from core.model.approvals import AWAITING
from core.model.errors import LimitStop, UnknownRun
from core.store import FINAL_RUN_STATUSES, RunRecord, SessionEntry, Store, TranscriptMessage, now_ms
from core.store.runs import MERGED, STEER_LANE

if TYPE_CHECKING:
    from core.engine.runs.ordering import SessionClaims

log = logging.getLogger(__name__)


QueueFor = Callable[[SessionEntry], tuple[str, int]]
"""A session's busy-input mode and debounce in ms (D75): `queue`, `collect`, `steer`,
`interrupt`."""


class RunManager(RunEnding):
    def __init__(
        self,
        store: Store,
        executor: TurnExecutor,
        lanes: Lanes,
        *,
        metrics: Metrics = DISCARD,
        owner: str | None = None,
        claims: SessionClaims | None = None,
        queue_for: QueueFor | None = None,
    ) -> None:
        self.store = store
        self.queue_for = queue_for
        """Busy input per session (D75); None: every message is its own turn (D13)."""
        self.executor = executor
        self.lanes = lanes
        self.metrics = metrics
        self.owner = owner
        """The process id stored on the runs it accepts (D27)."""
        self.claims = claims
        """Session FIFO across processes (D27); None: this process alone decides."""
        if claims is not None:
            claims.on_abort(self.abort_here)
            claims.on_interrupt(self.interrupt_here)
            claims.on_steer(self._steered_elsewhere)
        self._queues: dict[str, deque[Pending]] = {}
        self._workers: dict[str, asyncio.Task[None]] = {}
        self._active: dict[str, tuple[Pending, asyncio.Task[TurnResult]]] = {}
        self._abort_reasons: dict[str, str] = {}
        """Why a running turn was aborted, by run id, for its outcome (D68: a cancel says so)."""
        self._admitting: dict[str, Pending] = {}  # dequeued, waiting for a lane slot
        self._pending: dict[str, Pending] = {}
        self._listeners: list[RunListener] = []
        self._pause_listeners: list[PauseListener] = []
        self._delta_sinks: list[Callable[[RunRecord, RunRequest], DeltaSink | None]] = []
        self._closing = False
        self._claim_waits: set[str] = set()  # sessions whose next turn waits for its claim
        self._aborts: set[asyncio.Future[int]] = set()
        self._steered: set[str] = set()  # sessions with a steer queued here (D114)

    def add_listener(self, listener: RunListener) -> None:
        """Called after every run ends (delivery, announces, sub-agent registry)."""
        self._listeners.append(listener)

    def add_pause_listener(self, listener: PauseListener) -> None:
        """Called after a run paused for its questions (D72): they go out to people."""
        self._pause_listeners.append(listener)

    def add_delta_sink(self, factory: Callable[[RunRecord, RunRequest], DeltaSink | None]) -> None:
        self._delta_sinks.append(factory)

    async def recover(self) -> list[RunRecord]:
        return await self.store.abort_inflight_runs("gateway restarted while the run was active")

    async def submit(self, request: RunRequest, entry: SessionEntry | None = None) -> RunRecord:
        """Persist and enqueue a run; returns at once with the run `queued`. `entry`: the
        session as the caller just read it (D146: not read again on the turn's path)."""
        if entry is None or entry.key != request.session_key:
            entry = await self.store.get_session(request.session_key)
        if entry is None:
            raise UnknownRun(f"Unknown session: {request.session_key}")
        run_id = str(uuid.uuid4())
        run = RunRecord(
            id=run_id,
            session_key=request.session_key,
            status="queued",
            lane=request.lane,
            deliver=request.deliver,
            created_at=now_ms(),
            input_message_id=request.input_message_id,
            meta={
                "traceId": request.context.trace_id,
                "hops": request.context.hops,
                **request.meta,
                **request_extras(request),
            },
            owner=self.owner,
        )
        if request.input_message_id is None:
            msg = request.input_message or TranscriptMessage.text(
                "user", request.message, now_ms(), meta=request.message_meta
            )
            msg.run_id = run_id
            request.input_message_id = await (
                self.store.enqueue_claimed(entry, msg, run, request.claims)
                if request.claims
                else self.store.enqueue_message(entry, msg, run)
            )
        else:
            await self.store.create_run(run)
        self._enqueue(run, request)
        if request.lane == STEER_LANE:
            self._steered.add(request.session_key)
            if self.claims is not None and request.session_key not in self._active:
                await self.claims.steer_elsewhere(request.session_key)  # it may run there
        if request.deliver and request.lane == "main" and self._mode(entry)[0] == "interrupt":
            active = self._active.get(request.session_key)
            if active is not None and active[0].run.id != run.id:
                active[1].cancel()  # D75: the running turn stops (its partial reply stays)
            elif active is None and self.claims is not None:  # it may run elsewhere (D127)
                await self.claims.interrupt_elsewhere(request.session_key)
        return run

    def steer_noted(self, session_key: str) -> bool:
        """Whether a steer for `session_key` waits for its running turn here (D114): one queued
        on another process is known here only once its notice arrives."""
        return session_key in self._steered

    def _steered_elsewhere(self, session_key: str) -> None:
        """A steer queued on another process (D114): noted only while a turn of that session
        runs here, which then merges it (a steer with no turn running becomes its own turn)."""
        if session_key in self._active:
            self._steered.add(session_key)

    def _mode(self, entry: SessionEntry) -> tuple[str, int]:
        return self.queue_for(entry) if self.queue_for is not None else ("queue", 0)

    def adopt(self, run: RunRecord, request: RunRequest) -> None:
        """Queue a stored run this process now owns (taken over from a dead process, D27)."""
        request.input_message_id = run.input_message_id
        self._enqueue(run, request)

    def _enqueue(self, run: RunRecord, request: RunRequest) -> None:
        pending = Pending(run, request, asyncio.get_running_loop().create_future())
        self._pending[run.id] = pending
        queue = self._queues.setdefault(request.session_key, deque())
        queue.append(pending)
        if len(queue) > 1 and _order(queue[-2].run) > _order(run):
            # stored out of order (concurrent commits): the session's turns go by arrival (D27)
            ordered = sorted(queue, key=lambda p: _order(p.run))
            queue.clear()
            queue.extend(ordered)
        if request.session_key not in self._workers:
            self._workers[request.session_key] = asyncio.create_task(
                self._drain(request.session_key), name=f"runs:{request.session_key}"
            )

    async def wait(self, run_id: str, timeout: float | None) -> RunOutcome:
        """Wait for a run to end; `status: "timeout"` when it is still going at the deadline."""
        pending = self._pending.get(run_id)
        if pending is not None:
            try:
                return await asyncio.wait_for(asyncio.shield(pending.done), timeout)
            except TimeoutError:
                return RunOutcome(run_id, "timeout")
        run = await self.store.get_run(run_id)
        if run is None:
            raise UnknownRun(f"Unknown run: {run_id}")
        if self.claims is not None and run.status not in FINAL_RUN_STATUSES:
            run = await self._wait_elsewhere(run, timeout)
        return RunOutcome(
            run_id, run.status if run.status in FINAL_RUN_STATUSES else "timeout", run.error
        )

    async def _wait_elsewhere(self, run: RunRecord, timeout: float | None) -> RunRecord:
        """A run another process executes (D27): woken by its `run` events (D28)."""
        assert self.claims is not None
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while run.status not in FINAL_RUN_STATUSES:
            left = None if deadline is None else deadline - loop.time()
            if left is not None and left <= 0:
                break
            since = self.claims.generation(run.session_key)
            fresh = await self.store.get_run(run.id)
            if fresh is None or fresh.status in FINAL_RUN_STATUSES:
                return fresh or run
            await self.claims.wait(run.session_key, since, left)
            run = await self.store.get_run(run.id) or run
        return run

    def load(self) -> tuple[int, int]:
        """(queued, running) turns in this process, for `/metrics`."""
        return sum(map(len, self._queues.values())) + len(self._admitting), len(self._active)

    def is_pending(self, run_id: str) -> bool:
        """True while this process still runs (or queues) `run_id`."""
        return run_id in self._pending

    def is_active(self, session_key: str) -> bool:
        return (
            session_key in self._active
            or session_key in self._admitting
            or bool(self._queues.get(session_key))
        )

    async def close(self) -> None:
        self._closing = True
        if self.claims is not None:
            self._hand_over()
        for key in list(self._workers):
            await self.abort_session(key, "gateway stopping", here_only=True)
        for key in list(self._claim_waits):  # nothing left to claim: stop waiting now
            if (worker := self._workers.get(key)) is not None:
                worker.cancel()
        for task in list(self._workers.values()):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        closer = getattr(self.executor, "aclose", None)  # its model connections (D51)
        if closer is not None:
            await closer()

    async def _drain(self, session_key: str) -> None:
        queue = self._queues[session_key]
        try:
            while queue:
                pending = queue.popleft()
                bind_turn(pending.run.id, session_key)  # every log line of the turn names it
                self._admitting[session_key] = pending
                since = self.claims.generation(session_key) if self.claims else 0
                try:
                    async with self.lanes.slot(pending.request.lane):
                        self._admitting.pop(session_key, None)
                        if pending.done.done():  # aborted while waiting for the lane
                            continue
                        outcome = await self._execute(pending)
                finally:
                    self._admitting.pop(session_key, None)
                if outcome is None:  # another process runs a turn of this session first
                    queue.appendleft(pending)
                    assert self.claims is not None
                    self._claim_waits.add(session_key)
                    try:
                        await self.claims.wait(session_key, since)
                    finally:
                        self._claim_waits.discard(session_key)
                    continue
                await self._finish(pending, outcome)
        finally:
            self._workers.pop(session_key, None)
            if not queue:
                self._queues.pop(session_key, None)

    async def _execute(self, pending: Pending) -> RunOutcome | None:
        """The turn's outcome; None when the session is busy on another process (D27)."""
        run, request = pending.run, pending.request
        entry = await self.store.get_session(run.session_key)
        if entry is None:
            return RunOutcome(run.id, "error", "session was deleted")
        pending.session_was_aborted = bool(entry.aborted_last_run)
        chat = request.deliver and request.lane == "main"
        mode, debounce = self._mode(entry) if chat else ("queue", 0)
        if debounce:
            await self._quiet(run.session_key, debounce)
        run.started_at = now_ms()
        # the input takes its place in the transcript now, after the earlier turns' replies (D13)
        if self.claims is None:
            await self.store.start_run(run, entry)
        else:
            claimed = await self.claims.claim(run, entry)
            if claimed != "started":
                run.started_at = None
                if claimed == "busy":
                    return None
                stored = await self.store.get_run(run.id)
                if stored is not None and stored.error == MERGED:
                    return RunOutcome(run.id, "aborted", MERGED)
                return RunOutcome(run.id, "aborted", "taken over by another process")
        run.status = "running"
        if mode != "queue" or debounce:  # D75: what waited behind it joins this turn
            texts = await self._merge(pending, entry)
            request.message = "\n".join([request.message, *texts])
        if mode == "steer":

            async def steer() -> list[str]:
                return await self._merge(pending, entry)

            request.steer = steer
        else:

            async def steered() -> list[str]:  # D114: only `sessions_send` steers, and only
                if run.session_key not in self._steered:  # when one was queued (no query)
                    return []
                self._steered.discard(run.session_key)
                return await self._merge(pending, entry, steer_only=True)

            request.steer = steered
        self.metrics.turn_started(run)
        sink = request.on_delta or next(
            (s for f in self._delta_sinks if (s := f(run, request))), None
        )
        task = asyncio.create_task(self.executor.run_turn(run, request, entry, sink))
        self._active[run.session_key] = (pending, task)
        try:
            async with asyncio.timeout(request.timeout_seconds or None):  # D198
                result = await task
        except TimeoutError:
            return RunOutcome(run.id, "timeout", f"run timed out after {request.timeout_seconds}s")
        except asyncio.CancelledError:
            if self._closing or task.cancelled():
                return RunOutcome(run.id, "aborted", self._abort_reasons.pop(run.id, "aborted"))
            raise
        except LimitStop as stop:  # a cost limit, before a model request (D64)
            return RunOutcome(run.id, "limited", stop.text)
        except Exception as exc:  # model/tool failures end the run, not the gateway
            log.warning("run %s failed: %s", run.id, exc)
            return RunOutcome(run.id, "error", str(exc) or type(exc).__name__)
        finally:
            self._active.pop(run.session_key, None)
        run.input_tokens, run.output_tokens = result.input_tokens, result.output_tokens
        run.total_tokens = (result.input_tokens or 0) + (result.output_tokens or 0)
        pending.write = result.write
        if result.pause is not None:
            pending.pause = result.pause
            return RunOutcome(run.id, AWAITING)
        return RunOutcome(
            run.id,
            "ok",
            reply=result.reply,
            input_tokens=result.input_tokens,
            output_tokens=result.output_tokens,
        )

    async def _quiet(self, session_key: str, debounce_ms: int) -> None:
        """`debounceMs` (D75): a turn starts once the session's newest message is that old."""
        while True:
            newest = await self.store.newest_queued_at(session_key) or 0
            left = newest + debounce_ms - now_ms()
            if left <= 0:
                return
            await asyncio.sleep(left / 1000)

    async def _merge(
        self, leader: Pending, entry: SessionEntry, *, steer_only: bool = False
    ) -> list[str]:
        """The chat messages queued behind `leader` join its turn (D75), wherever they were
        queued, with `sessions_send` steers (D114; with `steer_only`, those alone); their
        waiters get the leader's outcome. Returns their texts in order."""
        merged = await self.store.merge_queued(leader.run, entry, steer_only=steer_only)
        if not merged:
            return []
        ids = {run_id for run_id, _ in merged}
        queue = self._queues.get(leader.run.session_key)
        if queue:
            keep = [p for p in queue if p.run.id not in ids]
            leader.followers += [p for p in queue if p.run.id in ids]
            queue.clear()
            queue.extend(keep)
        for run_id in ids:
            self._pending.pop(run_id, None)
        return [m.plain_text() for _, m in merged]


def _order(run: RunRecord) -> tuple[int, int]:
    """A session's turns go by their input message's id (the arrival order), then creation."""
    return (run.input_message_id if run.input_message_id is not None else 2**62, run.created_at)
