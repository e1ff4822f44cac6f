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
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from core.engine.observability.logs import bind_turn
from core.engine.observability.metrics import DISCARD, Metrics
from core.engine.runs.lanes import Lanes
from core.model.approvals import AWAITING, Approval
from core.model.errors import LimitStop, UnknownRun
from core.model.records import RunPatch, TurnWrite
from core.model.tool_context import ToolContext
from core.store import FINAL_RUN_STATUSES, RunRecord, SessionEntry, Store, TranscriptMessage, now_ms
from core.store.inbound import Claim
from core.store.runs import MERGED, STEER_LANE

if TYPE_CHECKING:
    from core.engine.runs.ordering import SessionClaims

log = logging.getLogger(__name__)


DeltaSink = Callable[[str], Awaitable[None]]
Steer = Callable[[], Awaitable[list[str]]]
QueueFor = Callable[[SessionEntry], tuple[str, int]]
"""A session's busy-input mode and debounce in ms (D75): `queue`, `collect`, `steer`,
`interrupt`."""


@dataclass(slots=True)
class RunRequest:
    """What to run: `message` becomes the user turn unless `input_message_id` is given."""

    session_key: str
    message: str
    context: ToolContext
    extra_system_prompt: str | None = None
    deliver: bool = False
    lane: str = "main"
    timeout_seconds: float | None = None
    input_message_id: int | None = None
    message_meta: dict[str, Any] | None = None
    input_message: TranscriptMessage | None = None
    """The user turn as it is to be stored (e.g. with attachment parts, D3); else `message`."""
    model: str | None = None
    thinking: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    on_delta: DeltaSink | None = None
    claims: tuple[Claim, ...] = ()
    """Inbound identities stored with the message and the run (D16); a repeat raises
    DuplicateInbound from :meth:`RunManager.submit` before anything is queued."""
    steer: Steer | None = None
    """Set while the turn runs under `steer` (D75): the texts that arrived since, taken into
    the turn before its next model request."""


@dataclass(slots=True)
class TurnResult:
    reply: str | None
    input_tokens: int | None = None
    output_tokens: int | None = None
    context_tokens: int | None = None
    write: TurnWrite | None = None
    """The turn's new transcript rows and session fields: committed with the run's end, in
    one transaction (D41), before anyone waiting on the run is told."""
    pause: Pause | None = None
    """The turn stopped to ask people (D72, D73): the run waits, durably, for the answers."""


@dataclass(slots=True)
class Pause:
    """What a paused run stores: its meta (with the partial turn) and its questions."""

    meta: dict[str, Any]
    questions: list[Approval]


@dataclass(slots=True)
class RunOutcome:
    run_id: str
    status: str
    error: str | None = None
    reply: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None

    @property
    def final(self) -> bool:
        return self.status in FINAL_RUN_STATUSES


class TurnExecutor(Protocol):
    async def run_turn(
        self, run: RunRecord, request: RunRequest, entry: SessionEntry, on_delta: DeltaSink | None
    ) -> TurnResult: ...


RunListener = Callable[[RunRecord, RunRequest, RunOutcome], Awaitable[None]]
PauseListener = Callable[[RunRecord, RunRequest, list[Approval]], Awaitable[None]]


@dataclass(slots=True)
class _Pending:
    run: RunRecord
    request: RunRequest
    done: asyncio.Future[RunOutcome]
    session_was_aborted: bool = False  # its session's previous run died with the process
    write: TurnWrite | None = None  # what the turn stores with its end (D41)
    pause: Pause | None = None  # the questions the turn stopped for (D72)
    followers: list[_Pending] = field(default_factory=list)  # merged into this turn (D75)


class RunManager:
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
        self._queues: dict[str, deque[_Pending]] = {}
        self._workers: dict[str, asyncio.Task[None]] = {}
        self._active: dict[str, tuple[_Pending, asyncio.Task[TurnResult]]] = {}
        self._abort_reasons: dict[str, str] = {}
        """Why a running turn was aborted, by run id, for its outcome (D68: a cancel says so)."""
        self._admitting: dict[str, _Pending] = {}  # dequeued, waiting for a lane slot
        self._pending: dict[str, _Pending] = {}
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
                **_extras(request),
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
        if request.deliver and request.lane == "main" and self._mode(entry)[0] == "interrupt":
            active = self._active.get(request.session_key)
            if active is not None and active[0].run.id != run.id:
                active[1].cancel()  # D75: the running turn stops (its partial reply stays)
            elif active is None and self.claims is not None:  # it may run elsewhere (D127)
                await self.claims.interrupt_elsewhere(request.session_key)
        return run

    def _mode(self, entry: SessionEntry) -> tuple[str, int]:
        return self.queue_for(entry) if self.queue_for is not None else ("queue", 0)

    def adopt(self, run: RunRecord, request: RunRequest) -> None:
        """Queue a stored run this process now owns (taken over from a dead process, D27)."""
        request.input_message_id = run.input_message_id
        self._enqueue(run, request)

    def _enqueue(self, run: RunRecord, request: RunRequest) -> None:
        pending = _Pending(run, request, asyncio.get_running_loop().create_future())
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

    async def _execute(self, pending: _Pending) -> RunOutcome | None:
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
            result = await asyncio.wait_for(task, request.timeout_seconds or None)
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
        self, leader: _Pending, entry: SessionEntry, *, steer_only: bool = False
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

    async def _pause(self, pending: _Pending, outcome: RunOutcome) -> None:
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

    async def _finish(self, pending: _Pending, outcome: RunOutcome) -> None:
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


def _extras(request: RunRequest) -> dict[str, Any]:
    """What a process that adopts this run needs beyond its row and input (D27)."""
    extras = {
        k: v
        for k, v in (
            ("extraSystemPrompt", request.extra_system_prompt),
            ("model", request.model),
            ("thinking", request.thinking),
            ("timeoutSeconds", request.timeout_seconds),
        )
        if v is not None
    }
    ctx = request.context  # an adopted run keeps its requester (D60)
    extras["role"] = ctx.role
    if ctx.automated:  # a cron or hook turn stays one when adopted: it makes no jobs (D81)
        extras["automated"] = True
    extras.update(
        {
            k: v
            for k, v in (
                ("sender", ctx.sender),
                ("personId", ctx.person_id),
                ("group", ctx.group_id),
            )
            if v
        }
    )
    return {"request": extras}


def _order(run: RunRecord) -> tuple[int, int]:
    """A session's turns go by their input message's id (the arrival order), then creation."""
    return (run.input_message_id if run.input_message_id is not None else 2**62, run.created_at)
