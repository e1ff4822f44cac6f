"""Events between gateway processes (D28): PostgreSQL LISTEN/NOTIFY, or in-process on SQLite.

A turn that ends on process B must wake the claim waiting on A (session FIFO, D27), the HTTP
waiter on A, and the web chats connected to A. Every process publishes small JSON events on one
NOTIFY channel and listens on a dedicated asyncpg connection. NOTIFY payloads are limited to
8000 bytes, so a larger event is sent as numbered chunks (NOTIFYs from one connection arrive in
order) and put together by the receivers. Local subscribers get a process's own events at once,
without the round trip; the echo from PostgreSQL is dropped by origin id.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

CHANNEL = "crosstalk_events"
CHUNK = 7000
"""Bytes (ASCII characters) per NOTIFY payload, under PostgreSQL's 8000-byte limit."""

Handler = Callable[[str, dict[str, Any]], None]
"""Called with (topic, payload) in the event loop; must not block (spawn work instead)."""


class EventBus:
    """In-process bus: what one process publishes, its own subscribers receive (SQLite)."""

    def __init__(self) -> None:
        self._handlers: list[Handler] = []
        self.origin = uuid.uuid4().hex

    def subscribe(self, handler: Handler) -> None:
        self._handlers.append(handler)

    def unsubscribe(self, handler: Handler) -> None:
        with contextlib.suppress(ValueError):
            self._handlers.remove(handler)

    async def start(self) -> None:
        """Nothing to connect in-process."""

    async def stop(self) -> None:
        """Nothing to close in-process."""

    async def publish(self, topic: str, payload: dict[str, Any]) -> None:
        self._dispatch(topic, payload)

    def _dispatch(self, topic: str, payload: dict[str, Any]) -> None:
        for handler in list(self._handlers):
            try:
                handler(topic, payload)
            except Exception:
                log.exception("event handler failed for %s", topic)


class PgEventBus(EventBus):
    """The bus across processes: NOTIFY to publish, LISTEN on a dedicated connection."""

    def __init__(self, dsn: str) -> None:
        super().__init__()
        self.dsn = dsn
        self._listen: Any = None
        self._notify: Any = None
        self._lock = asyncio.Lock()
        self._parts: dict[str, list[str]] = {}
        self._closing = False
        self._reconnect: asyncio.Task[None] | None = None

    async def start(self) -> None:
        import asyncpg

        self._notify = await asyncpg.connect(self.dsn)
        await self._connect_listener()

    async def _connect_listener(self) -> None:
        import asyncpg

        self._listen = await asyncpg.connect(self.dsn)
        await self._listen.add_listener(CHANNEL, self._on_notify)
        self._listen.add_termination_listener(self._on_lost)

    def _on_lost(self, _conn: Any) -> None:
        if not self._closing and self._reconnect is None:
            self._reconnect = asyncio.get_running_loop().create_task(self._relisten())

    async def _relisten(self) -> None:
        """The listener is gone (server restart): reconnect; the capped polls cover the gap."""
        delay = 0.5
        try:
            while not self._closing:
                try:
                    await self._connect_listener()
                    return
                except Exception as exc:
                    log.warning("event listener reconnect failed: %s", exc)
                    await asyncio.sleep(delay)  # a backoff between attempts, not an event
                    delay = min(delay * 2, 10.0)
        finally:
            self._reconnect = None

    async def stop(self) -> None:
        self._closing = True
        if self._reconnect is not None:
            self._reconnect.cancel()
        for conn in (self._listen, self._notify):
            if conn is not None:
                with contextlib.suppress(Exception):
                    await conn.close()

    async def publish(self, topic: str, payload: dict[str, Any]) -> None:
        self._dispatch(topic, payload)
        # ASCII JSON: its characters are its bytes, which the 8000-byte limit counts
        data = json.dumps({"o": self.origin, "t": topic, "p": payload}, ensure_ascii=True)
        if len(data) <= CHUNK:
            frames = [f"1|{data}"]
        else:
            ref = uuid.uuid4().hex
            parts = [data[i : i + CHUNK] for i in range(0, len(data), CHUNK)]
            frames = [f"n|{ref}|{i}|{len(parts)}|{p}" for i, p in enumerate(parts)]
        if self._notify is None:
            return
        try:
            async with self._lock:
                for frame in frames:
                    await self._notify.execute("SELECT pg_notify($1, $2)", CHANNEL, frame)
        except Exception as exc:  # the waiters' capped polls still find the change
            log.warning("event %s not published: %s", topic, exc)

    def _on_notify(self, _conn: Any, _pid: int, _channel: str, frame: str) -> None:
        kind, _, rest = frame.partition("|")
        if kind == "n":
            ref, index, total, part = rest.split("|", 3)
            parts = self._parts.setdefault(ref, [])
            if int(index) != len(parts):  # a lost frame: drop the event
                self._parts.pop(ref, None)
                return
            parts.append(part)
            if len(parts) < int(total):
                return
            rest = "".join(self._parts.pop(ref))
        try:
            event = json.loads(rest)
        except ValueError:
            log.warning("malformed cluster event dropped")
            return
        if event.get("o") == self.origin:
            return  # our own, already dispatched locally
        self._dispatch(str(event.get("t")), event.get("p") or {})


def make_bus(store_url: str) -> EventBus:
    """The bus for a store: across processes on PostgreSQL, in-process on SQLite."""
    if store_url.startswith("sqlite"):
        return EventBus()
    dsn = store_url.replace("postgresql+asyncpg://", "postgresql://", 1)
    return PgEventBus(dsn)
