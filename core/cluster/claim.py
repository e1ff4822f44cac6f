"""Session FIFO across processes (D27): a turn starts only when its session is free everywhere.

Before a turn starts, its process claims it in one transaction that locks the session row
(`SELECT … FOR UPDATE` on PostgreSQL; SQLite has one writer anyway) and checks that no run of
the session is `running` and that no older `queued` run of another process waits; then it marks
the run running and places its input message (D13). A refused claim waits for the `run` event
that any process publishes when a turn ends (D28), with a capped poll as the fallback for a
lost event. A process orders its own queued turns itself (:class:`core.runs.RunManager`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Literal

from sqlalchemy import Connection, and_, func, or_, select, update

from core.cluster.events import EventBus
from core.store import RunRecord, SessionEntry, Store, TranscriptMessage
from core.store.store import _place
from core.store.tables import RunRow, SessionRow

R = RunRow.__table__  # type: ignore[attr-defined]
S = SessionRow.__table__  # type: ignore[attr-defined]

ClaimResult = Literal["started", "busy", "gone"]
"""`gone`: the run is no longer queued (a survivor aborted it while we were presumed dead)."""

RUN_TOPIC = "run"
ABORT_TOPIC = "abort"
MAX_TRACKED = 10_000


class TurnClaims:
    """Claims turns for the process `owner`; one instance per RunManager."""

    def __init__(self, store: Store, owner: str, bus: EventBus, *, poll_seconds: float = 5.0
                 ) -> None:
        self.store = store
        self.owner = owner
        self.bus = bus
        self.poll_seconds = poll_seconds
        self._generation: dict[str, int] = {}
        self._events: dict[str, asyncio.Event] = {}
        self.on_abort: Callable[[str, str], None] | None = None
        """Stops this process's turns of a session when another process's `/stop` asks."""
        bus.subscribe(self._on_event)

    def generation(self, session_key: str) -> int:
        """A counter that moves on every ended turn of the session; read before claiming."""
        if len(self._generation) > MAX_TRACKED:  # forgetting only makes a waiter retry early
            self._generation.clear()
        return self._generation.setdefault(session_key, 0)

    async def claim(self, run: RunRecord, entry: SessionEntry) -> ClaimResult:
        me, key = self.owner, entry.key
        older = (R.c.input_message_id < run.input_message_id if run.input_message_id is not None
                 else R.c.created_at < run.created_at)

        def op(c: Connection) -> tuple[ClaimResult, TranscriptMessage | None]:
            if c.dialect.name == "postgresql":
                c.execute(select(S.c.key).where(S.c.key == key).with_for_update())
            blocker = c.execute(select(R.c.id).where(and_(
                R.c.session_key == key, R.c.id != run.id,
                or_(R.c.status == "running",
                    and_(R.c.status == "queued", R.c.owner != me, older)))).limit(1)).first()
            if blocker is not None:
                return "busy", None
            done = c.execute(update(R).where(and_(R.c.id == run.id, R.c.status == "queued",
                                                     R.c.owner == me))
                             .values(status="running", started_at=run.started_at, owner=me))
            if not done.rowcount:
                return "gone", None
            if run.input_message_id is None:
                return "started", None
            return "started", _place(c, entry.session_id, run.input_message_id)

        result, placed = await self.store.write(op)
        if placed is not None:
            await self.store._mirror_placed(entry, [placed])
        return result

    async def wait(self, session_key: str, since: int, timeout: float | None = None) -> None:
        """Return once a turn of the session ended after `since` (a generation), or after the
        capped poll interval (or `timeout`, when shorter)."""
        if self.generation(session_key) != since:
            return
        cap = self.poll_seconds if timeout is None else min(timeout, self.poll_seconds)
        event = self._events.setdefault(session_key, asyncio.Event())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(event.wait(), max(cap, 0))

    async def ended(self, run: RunRecord) -> None:
        """Tell every process that a turn of this session ended (its status is stored)."""
        await self.bus.publish(RUN_TOPIC, {"s": run.session_key, "r": run.id,
                                           "st": run.status})

    async def abort_elsewhere(self, session_key: str, reason: str) -> int:
        """Ask the other processes to stop their turns of the session; returns how many
        they hold (queued or running)."""
        me = self.owner
        count = await self.store.read(lambda c: c.execute(
            select(func.count()).where(and_(
                R.c.session_key == session_key, R.c.owner != me,
                R.c.status.in_(("queued", "running"))))).scalar())
        if count:
            await self.bus.publish(ABORT_TOPIC, {"s": session_key, "reason": reason,
                                                 "from": me})
        return int(count or 0)

    def _on_event(self, topic: str, payload: dict[str, object]) -> None:
        if topic == ABORT_TOPIC:
            if payload.get("from") != self.owner and self.on_abort is not None:
                self.on_abort(str(payload.get("s")), str(payload.get("reason")))
            return
        if topic != RUN_TOPIC:
            return
        key = str(payload.get("s"))
        if key in self._generation:  # only sessions someone here waits on, or did
            self._generation[key] += 1
        event = self._events.pop(key, None)
        if event is not None:
            event.set()
