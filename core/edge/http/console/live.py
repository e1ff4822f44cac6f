"""`GET /api/events`: server-sent events that tell the console what changed (D183).

Each event names topics (`sessions`, `deliveries`, `pairing`, `cron`); the page then reads the
lists again through the ordinary API routes, so what it shows is always what the API says.

What changed is found from watermarks (the newest session update, delivery, pairing request or
approval and cron run: indexed maxima, `core.store.console`), read by one task per process and
only while a console is connected to that process: once a second, and sooner when any process
ends a turn (the cluster's `run` event, D28, which carries across processes on PostgreSQL), but
never more than twice a second. Nothing is added to the turn path, and a console connected to
one process sees what every other process did.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any

from aiohttp import web

from core.edge.http.appkeys import RUNTIME, SECRET
from core.edge.http.auth import CONSOLE_SIGNED_IN, is_authorized, unauthorized
from core.edge.http.console.signin import signed_in
from core.engine.cluster.claim import RUN_TOPIC
from core.engine.cluster.events import EventBus
from core.store import Store

log = logging.getLogger(__name__)

TOPICS = ("sessions", "deliveries", "pairing", "cron")
POLL_SECONDS = 1.0
MIN_GAP_SECONDS = 0.5
"""At most two reads a second however many turns end: a busy gateway's `run` events only
bring the next read forward."""
HEARTBEAT_SECONDS = 15.0
"""A comment line this often keeps proxies from closing an idle stream, and lets the gateway
notice a console that went away or a sign-in that expired."""
FEED: web.AppKey[ConsoleFeed] = web.AppKey("crosstalk.console.feed")


class ConsoleFeed:
    """Fans changes out to the connected consoles of this process."""

    heartbeat_seconds = HEARTBEAT_SECONDS
    min_gap_seconds = MIN_GAP_SECONDS

    def __init__(self, store: Store, bus: EventBus, *, poll_seconds: float = POLL_SECONDS) -> None:
        self.store = store
        self.bus = bus
        self.poll_seconds = poll_seconds
        """Tests shorten it, and `heartbeat_seconds`, on `app[FEED]`."""
        self._queues: set[asyncio.Queue[frozenset[str]]] = set()
        self._kick = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._last: dict[str, Any] | None = None

    def subscribe(self) -> asyncio.Queue[frozenset[str]]:
        queue: asyncio.Queue[frozenset[str]] = asyncio.Queue(maxsize=64)
        self._queues.add(queue)
        if self._task is None or self._task.done():
            self.bus.subscribe(self._on_event)
            self._task = asyncio.get_running_loop().create_task(self._watch())
        return queue

    def unsubscribe(self, queue: asyncio.Queue[frozenset[str]]) -> None:
        self._queues.discard(queue)

    async def close(self) -> None:
        self._queues.clear()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task

    def _on_event(self, topic: str, _payload: dict[str, Any]) -> None:
        if topic == RUN_TOPIC:  # a turn ended somewhere: its session, reply and delivery moved
            self._kick.set()

    async def _watch(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while self._queues:
                read_at = loop.time()
                try:
                    self._publish(await self.store.watermarks())
                except Exception as exc:  # a database hiccup: try again at the next tick
                    log.warning("console feed: %s", exc)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._kick.wait(), self.poll_seconds)
                self._kick.clear()
                gap = read_at + min(self.min_gap_seconds, self.poll_seconds) - loop.time()
                if gap > 0:
                    await asyncio.sleep(gap)  # rate limit, not a wait for an event
        finally:
            self.bus.unsubscribe(self._on_event)
            self._last = None

    def _publish(self, marks: dict[str, Any]) -> None:
        last, self._last = self._last, marks
        if last is None:
            return
        changed = frozenset(t for t in TOPICS if marks.get(t) != last.get(t))
        if not changed:
            return
        for queue in list(self._queues):
            if queue.full():  # a console that stopped reading: it reloads everything anyway
                continue
            queue.put_nowait(changed)


def _frame(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


async def events(request: web.Request) -> web.StreamResponse:
    if not is_authorized(request, request.app[SECRET]):
        return unauthorized()
    feed = request.app[FEED]
    queue = feed.subscribe()
    resp = web.StreamResponse(
        headers={
            "Content-Type": "text/event-stream",
            "Cache-Control": "no-store",
            "X-Accel-Buffering": "no",
        }
    )
    loop = asyncio.get_running_loop()
    try:
        await resp.prepare(request)
        await resp.write(b"retry: 2000\n" + _frame("ready", {"topics": list(TOPICS)}))
        beat = loop.time() + feed.heartbeat_seconds
        while True:
            try:
                changed = await asyncio.wait_for(queue.get(), max(0.0, beat - loop.time()))
                await resp.write(_frame("change", {"topics": sorted(changed)}))
                continue
            except TimeoutError:
                pass
            beat = loop.time() + feed.heartbeat_seconds  # however busy the stream is
            if request.get(CONSOLE_SIGNED_IN) and not await signed_in(request):
                await resp.write(_frame("signed-out", {}))  # the page shows the sign-in
                break
            await resp.write(b": keep-alive\n\n")
    except ConnectionResetError:  # the console went away
        pass
    finally:
        feed.unsubscribe(queue)
    return resp


async def _close_feed(app: web.Application) -> None:
    feed = app.get(FEED)
    if feed is not None:
        await feed.close()


def install(app: web.Application) -> None:
    """Mount the stream (after the app's runtime is set)."""
    rt = app[RUNTIME]
    app[FEED] = ConsoleFeed(rt.store, rt.cluster.bus)
    app.router.add_get("/api/events", events)
    app.on_shutdown.append(_close_feed)
