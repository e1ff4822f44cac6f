"""An open page's socket, from the moment it opens (D190).

A page that opens (or reloads, or a second tab) while a reply is being sent must show that reply
once: in its history or as a live frame after it, never both and never neither. So its socket
takes live frames from before its history is read, and holds them until the history frame has
gone out; then it sends the held ones, and any later one, unless the history already shows it. A
cron or webhook reply (D136) is shown by its delivery id, which its frames and its history row
carry; the delivery is in the history from the moment its row is opened, before its first send
(D16), so a history read either shows it or comes before its every frame. An agent's reply is
its run's (`runId`): the page fills that run's bubble, whichever way the reply comes. A message
typed in another tab (a `user` frame, D191) is shown by its time and text, as its history row.

A page that takes no frame (a suspended laptop, a client that never reads) must not hold the
chat's other tabs, nor the delivery writing to them: a frame that cannot be written within
`send_timeout` seconds ends that socket at once (D178); the page reloads its history when it
connects again.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from aiohttp import web

Step = Literal["registered", "read", "sending", "sent", "stored"]
"""Where a tab's opening, a reply or a typed message stands (D190, D191): the tab's socket takes
live frames (held until its history is sent) / its history was read; a reply's frame is about to
go to the sockets (its delivery is open) / went to them, or waits behind a message being stored
(its delivery's outcome is written after); a message typed in a tab is stored (its `user` frame,
and what waited behind it, go out next)."""
StepHook = Callable[[str, Step], Awaitable[None]]
"""Called with the chat and each step as it is passed; tests hold a step to pin an interleaving."""


class Tab:
    """One page's socket: frames held until its history is sent, then live (D190)."""

    __slots__ = ("_ended", "_held", "_said", "_shown", "send_timeout", "transport", "ws")

    def __init__(
        self,
        ws: web.WebSocketResponse,
        transport: asyncio.Transport | None = None,
        send_timeout: float = 10.0,
    ) -> None:
        self.ws = ws
        self.transport = transport
        """The socket's connection, aborted when the page takes no frame (D178)."""
        self.send_timeout = send_timeout
        self._held: list[tuple[dict[str, Any], str]] | None = []
        """Frames that came before the history went out; None once it has."""
        self._shown: frozenset[int] = frozenset()
        """The deliveries its history shows: their frames are never sent to this page."""
        self._ended: dict[str, str] = {}
        """The turns whose outcome (failed, stopped) its history shows, with the text it shows:
        their `ended` frame is never sent to this page, nor a notice (`endOf`) saying the same;
        a notice saying more (D81's restart notice names the message) still is."""
        self._said: frozenset[tuple[int, str]] = frozenset()
        """The user messages its history shows, by time and text: their `user` frames (typed in
        another tab, D191) are never sent to this page."""

    def _shows(self, frame: dict[str, Any]) -> bool:
        if frame.get("deliveryId") in self._shown:
            return True
        if frame.get("type") == "user":
            return (frame.get("ts"), frame.get("text")) in self._said
        if frame.get("type") == "ended":
            return frame.get("runId") in self._ended
        run = frame.get("endOf")
        return run is not None and self._ended.get(run) == frame.get("text")

    async def send(self, frame: dict[str, Any], data: str) -> None:
        """`frame` (serialised as `data`) to the page: now, later, or not at all (it is shown)."""
        if self._held is not None:
            self._held.append((frame, data))
        elif not self._shows(frame) and not self.ws.closed:
            await self._write(data)

    async def _write(self, data: str) -> None:
        """`data` to the page, or the connection aborted (and ConnectionError raised) when the
        page has not taken it within `send_timeout`: a closed socket with unsent bytes would
        otherwise wait for them forever (D178)."""
        try:
            await asyncio.wait_for(self.ws.send_str(data), self.send_timeout)
        except TimeoutError:
            if self.transport is not None:
                self.transport.abort()
            raise ConnectionResetError(
                f"web chat page took no frame for {self.send_timeout:g} s"
            ) from None

    async def open(self, messages: list[dict[str, Any]]) -> None:
        """Send the history frame, then the frames held meanwhile that it does not show."""
        self._shown = frozenset(int(m["deliveryId"]) for m in messages if "deliveryId" in m)
        self._said = frozenset(
            (int(m["ts"]), str(m["text"])) for m in messages if m.get("role") == "user"
        )
        self._ended = {
            str(m["runId"]): str(m["outcome"].get("text"))
            for m in messages
            if "outcome" in m and "runId" in m
        }
        await self._write(json.dumps({"type": "history", "messages": messages}))
        held = self._held if self._held is not None else []
        while held:  # a frame that comes while these go out joins the end of the list
            frame, data = held.pop(0)
            if not self._shows(frame) and not self.ws.closed:
                await self._write(data)
        self._held = None  # no await since the list was seen empty: nothing is left behind
