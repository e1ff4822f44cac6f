"""A chat's frames in the order they were said (D191): a user's message, then what follows it.

A message typed in one tab goes to the chat's other tabs, and through the cluster relay to its
tabs on the other processes (D28), as a `user` frame once the router has stored it: like a reply
(D190), so a tab that opens later finds it in its history and one that opened earlier drops the
frame when its history already shows it. What the chat is sent meanwhile (its turn's first words,
a command's answer, which comes while the router still has the message) waits behind it, so every
tab gets a message before its reply. While no message is being stored, frames go out at once.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from adapters.webchat.tabs import Tab

log = logging.getLogger(__name__)

Send = Callable[[str, dict[str, Any], "Tab | None"], Awaitable[None]]
"""Sends a frame to a chat's sockets and relays it (the tab given, if any, is left out)."""


@dataclass(slots=True)
class Slot:
    """A frame's place in its chat's order; a message's is filled once it is stored."""

    frame: dict[str, Any] | None = None
    skip: Tab | None = None
    """The tab the message was typed in: it shows the message already."""
    ready: bool = False


class Outbox:
    def __init__(self, send: Send) -> None:
        self._send = send
        self._waiting: dict[str, deque[Slot]] = {}
        """Per chat: a message being stored, and the frames that came after it."""
        self._draining: set[str] = set()

    def hold(self, peer: str) -> Slot:
        """The place of a message the router is about to get: later frames wait behind it."""
        slot = Slot()
        self._waiting.setdefault(peer, deque()).append(slot)
        return slot

    async def send(self, peer: str, frame: dict[str, Any]) -> None:
        """`frame` to the chat now, or after the messages before it are stored."""
        waiting = self._waiting.get(peer)
        if waiting is None:
            await self._send(peer, frame, None)
            return
        waiting.append(Slot(frame, None, ready=True))
        await self._drain(peer)

    async def release(
        self, peer: str, slot: Slot, frame: dict[str, Any] | None, skip: Tab | None
    ) -> None:
        """The message is stored: its frame (None: nothing to show) goes out, then what waited."""
        slot.frame, slot.skip, slot.ready = frame, skip, True
        await self._drain(peer)

    async def _drain(self, peer: str) -> None:
        """Send the chat's frames from the front while they are ready; one drain at a time, so a
        frame never overtakes another (a frame added meanwhile is sent by the running drain)."""
        if peer in self._draining:
            return
        self._draining.add(peer)
        waiting = self._waiting.get(peer)
        try:
            while waiting and waiting[0].ready:
                first = waiting[0]
                if first.frame is not None:
                    try:
                        await self._send(peer, first.frame, first.skip)
                    except Exception as exc:  # a socket closing under us: the rest still go
                        log.debug("web chat frame to %s failed: %s", peer, exc)
                waiting.popleft()
        finally:
            self._draining.discard(peer)
            if not waiting:
                self._waiting.pop(peer, None)
