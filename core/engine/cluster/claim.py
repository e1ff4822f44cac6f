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

from core.engine.cluster.events import EventBus
from core.engine.runs.ordering import ClaimResult
from core.store import RunRecord, SessionEntry, Store

RUN_TOPIC = "run"
ABORT_TOPIC = "abort"
INTERRUPT_TOPIC = "interrupt"
STEER_TOPIC = "steer"
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
        self._on_abort: list[Callable[[str, str], None]] = []
        self._on_interrupt: list[Callable[[str], None]] = []
        self._on_steer: list[Callable[[str], None]] = []
        bus.subscribe(self._on_event)

    def on_abort(self, handler: Callable[[str, str], None]) -> None:
        """`handler(session_key, reason)` stops this process's turns of a session when another
        process's `/stop` asks (the run manager registers itself)."""
        self._on_abort.append(handler)

    def on_interrupt(self, handler: Callable[[str], None]) -> None:
        """`handler(session_key)` stops this process's running turn of a session (not its
        queued ones) when a message for it arrived elsewhere under `interrupt` (D75, D127)."""
        self._on_interrupt.append(handler)

    def on_steer(self, handler: Callable[[str], None]) -> None:
        """`handler(session_key)`: a `sessions_send` steer for the session was queued on another
        process; a turn of it running here takes it in before its next model request (D114)."""
        self._on_steer.append(handler)

    def generation(self, session_key: str) -> int:
        """A counter that moves on every ended turn of the session; read before claiming."""
        if len(self._generation) > MAX_TRACKED:  # forgetting only makes a waiter retry early
            self._generation.clear()
        return self._generation.setdefault(session_key, 0)

    async def claim(self, run: RunRecord, entry: SessionEntry) -> ClaimResult:
        return await self.store.claim_turn(run, entry, self.owner)

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
        count = await self.store.runs_elsewhere(session_key, self.owner)
        if count:
            await self.bus.publish(
                ABORT_TOPIC, {"s": session_key, "reason": reason, "from": self.owner}
            )
        return count

    async def interrupt_elsewhere(self, session_key: str) -> None:
        """Ask the other processes to stop the session's running turn (D127)."""
        await self.bus.publish(INTERRUPT_TOPIC, {"s": session_key, "from": self.owner})

    async def steer_elsewhere(self, session_key: str) -> None:
        """Tell the other processes a steer for the session is queued (D114)."""
        await self.bus.publish(STEER_TOPIC, {"s": session_key, "from": self.owner})

    def _on_event(self, topic: str, payload: dict[str, object]) -> None:
        if topic in (INTERRUPT_TOPIC, STEER_TOPIC):
            if payload.get("from") != self.owner:
                told = self._on_interrupt if topic == INTERRUPT_TOPIC else self._on_steer
                for tell in told:
                    tell(str(payload.get("s")))
            return
        if topic == ABORT_TOPIC:
            if payload.get("from") != self.owner:
                for handler in self._on_abort:
                    handler(str(payload.get("s")), str(payload.get("reason")))
            return
        if topic != RUN_TOPIC:
            return
        key = str(payload.get("s"))
        if key in self._generation:  # only sessions someone here waits on, or did
            self._generation[key] += 1
        event = self._events.pop(key, None)
        if event is not None:
            event.set()
