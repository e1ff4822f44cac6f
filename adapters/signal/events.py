"""The daemon's event stream (``GET /api/v1/events``, server-sent events) and its cursor.

Each event carries an ``id``; the daemon keeps its last 1000 events, and a client that
reconnects with ``Last-Event-ID`` first gets the ones after it (an id it does not know, such as
one from before the daemon restarted, gets all it kept). The channel moves its cursor only after
an event's message has been stored, and keeps it in the state directory, so neither a dropped
stream nor a killed gateway loses a message; what comes twice is dropped by its identity (D16).
A hand-written reader: the stream is a few lines of text, and the libraries that parse it also
want to own reconnection, which is the connection supervisor's job here (D35).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

import aiohttp


@dataclass(frozen=True, slots=True)
class Event:
    id: str | None
    event: str
    data: str


async def read_events(
    resp: aiohttp.ClientResponse, on_traffic: Callable[[], None]
) -> AsyncIterator[Event]:
    """Events of one open stream until it ends; `on_traffic` for every line (keep-alives
    included, so the watchdog sees a live stream)."""
    last_id: str | None = None
    kind, data = "", list[str]()
    async for raw in resp.content:
        on_traffic()
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        if not line:
            if data:
                yield Event(last_id, kind or "message", "\n".join(data))
            kind, data = "", list[str]()
            continue
        if line.startswith(":"):
            continue  # a keep-alive comment
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            data.append(value)
        elif name == "id":
            last_id = value or None
        elif name == "event":
            kind = value


class Cursor:
    """Where the stream resumes, in memory and (with a state directory) on disk, 0600.

    ``value`` is the id of the last stored event. Before any event had an id, ``since_ms`` is
    when this channel first opened its stream (kept as ``@<ms>``): a reconnect then asks the
    daemon for everything it kept and takes only what arrived since (D164).
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.value: str | None = None
        self.since_ms: int | None = None
        text = ""
        if path is not None:
            with contextlib.suppress(OSError):
                text = path.read_text(encoding="utf-8").strip()
        if text.startswith("@") and text[1:].isdigit():
            self.since_ms = int(text[1:])
        elif text:
            self.value = text

    def started(self, now_ms: int) -> None:
        """The stream opened for the first time with nothing to resume from."""
        if self.value is None and self.since_ms is None:
            self.since_ms = now_ms
            self._write(f"@{now_ms}")

    def advance(self, event_id: str | None) -> None:
        if not event_id or event_id == self.value:
            return
        self.value = event_id
        self._write(event_id)

    def _write(self, text: str) -> None:
        if self.path is None:
            return
        tmp = self.path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, self.path)
