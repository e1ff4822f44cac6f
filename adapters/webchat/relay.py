"""The web chat across gateway processes (D28): frames go to every process's sockets.

Behind a load balancer the page may be connected to process A while its turn (or another tab's
turn) runs on B. Every frame a process sends to its own sockets is also published on the
cluster bus; each other process relays it to its own sockets of that chat, in order (one
relay task drains a queue). On SQLite the bus is in-process and nothing is relayed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any, Protocol

from core.api.gateway import EventBus, PgEventBus

log = logging.getLogger(__name__)
TOPIC = "webchat"


class LocalSockets(Protocol):
    """The web chat adapter as the relay sees it: its account and its own sockets."""

    account_id: str

    async def send_local(self, peer: str, payload: dict[str, Any]) -> None: ...


class ClusterRelay:
    def __init__(self, adapter: LocalSockets, bus: EventBus) -> None:
        self.adapter = adapter
        self.bus = bus
        self.shared = isinstance(bus, PgEventBus)
        """True when other processes may hold this chat's sockets (a send never fails here)."""
        self._queue: asyncio.Queue[tuple[str, dict[str, Any]]] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self.shared and self._task is None:
            self.bus.subscribe(self._on_event)
            self._task = asyncio.get_running_loop().create_task(self._drain(), name="webchat")

    async def stop(self) -> None:
        self.bus.unsubscribe(self._on_event)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def publish(self, peer: str, payload: dict[str, Any]) -> None:
        if self.shared:
            await self.bus.publish(
                TOPIC,
                {
                    "a": self.adapter.account_id,
                    "peer": peer,
                    "frame": payload,
                    "from": self.bus.origin,
                },
            )

    def _on_event(self, topic: str, payload: dict[str, Any]) -> None:
        if topic != TOPIC or payload.get("from") == self.bus.origin:
            return
        if payload.get("a") != self.adapter.account_id:
            return
        self._queue.put_nowait((str(payload.get("peer")), dict(payload.get("frame") or {})))

    async def _drain(self) -> None:
        while True:
            peer, frame = await self._queue.get()
            try:
                await self.adapter.send_local(peer, frame)
            except Exception as exc:  # a socket closing under us: the others still get it
                log.debug("web chat relay to %s failed: %s", peer, exc)
