"""Session FIFO across processes (D27): a turn starts only when its session is free everywhere.

Before a turn starts, its process claims it in one transaction that locks the session row
(`SELECT … FOR UPDATE` on PostgreSQL; SQLite has one writer anyway) and checks that no run of
the session is `running` and that no older `queued` run of another process waits; then it marks
the run running and places its input message (D13). A refused claim waits for the `run` event
that any process publishes when a turn ends (D28), with a capped poll as the fallback for a
lost event. A process orders its own queued turns itself (:class:`core.engine.runs.RunManager`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from sqlalchemy import Connection, and_, bindparam, func, or_, select, update

from core.engine.cluster.events import EventBus
from core.engine.runs.ordering import ClaimResult
from core.store import RunRecord, SessionEntry, Store, TranscriptMessage
from core.store.store import _place
from core.store.tables import RunRow, SessionRow

R = RunRow.__table__  # type: ignore[attr-defined]
S = SessionRow.__table__  # type: ignore[attr-defined]


# The claim's statements, built once (D42): it runs before every turn on PostgreSQL.
_LOCK_SESSION = select(S.c.key).where(S.c.key == bindparam("b_key")).with_for_update()


def _blocker(order: Any) -> Any:
    """A run that must go first: one running anywhere, or an older one queued elsewhere."""
    return (
        select(R.c.id)
        .where(
            and_(
                R.c.session_key == bindparam("b_key"),
                R.c.id != bindparam("b_rid"),
                or_(
                    R.c.status == "running",
                    and_(
                        R.c.status == "queued",
                        R.c.owner != bindparam("b_me"),
                        order < bindparam("b_older"),
                    ),
                ),
            )
        )
        .limit(1)
    )


_BLOCKER_BY_INPUT = _blocker(R.c.input_message_id)
_BLOCKER_BY_TIME = _blocker(R.c.created_at)
_START = (
    update(R)
    .where(
        and_(
            R.c.id == bindparam("b_rid"),
            R.c.status == "queued",
            R.c.owner == bindparam("b_me"),
        )
    )
    .values(status="running", started_at=bindparam("b_started"))
)

RUN_TOPIC = "run"
ABORT_TOPIC = "abort"
MAX_TRACKED = 10_000


class TurnClaims:
    """Claims turns for the process `owner`; one instance per RunManager."""

    def __init__(
        self, store: Store, owner: str, bus: EventBus, *, poll_seconds: float = 5.0
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
        key = entry.key
        by_input = run.input_message_id is not None
        params = {
            "b_key": key,
            "b_rid": run.id,
            "b_me": self.owner,
            "b_older": run.input_message_id if by_input else run.created_at,
        }

        def op(c: Connection) -> tuple[ClaimResult, TranscriptMessage | None]:
            if c.dialect.name == "postgresql":
                c.execute(_LOCK_SESSION, {"b_key": key})
            blocking = _BLOCKER_BY_INPUT if by_input else _BLOCKER_BY_TIME
            if c.execute(blocking, params).first() is not None:
                return "busy", None
            done = c.execute(
                _START, {"b_rid": run.id, "b_me": self.owner, "b_started": run.started_at}
            )
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
        await self.bus.publish(RUN_TOPIC, {"s": run.session_key, "r": run.id, "st": run.status})

    async def abort_elsewhere(self, session_key: str, reason: str) -> int:
        """Ask the other processes to stop their turns of the session; returns how many
        they hold (queued or running)."""
        me = self.owner
        count = await self.store.read(
            lambda c: c.execute(
                select(func.count()).where(
                    and_(
                        R.c.session_key == session_key,
                        R.c.owner != me,
                        R.c.status.in_(("queued", "running")),
                    )
                )
            ).scalar()
        )
        if count:
            await self.bus.publish(ABORT_TOPIC, {"s": session_key, "reason": reason, "from": me})
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
