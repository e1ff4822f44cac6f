"""A streamed answer whose client may leave before it ends (D134).

A client that closes an event stream (a stopped generation, a closed tab, a timeout) is
expected, not a fault of ours: the write that finds the socket gone is logged at debug, the
rest of the stream is dropped, and the handler still reaches the end of the turn, so what is
remembered after it (the conversation's fingerprint, an SDK retry's answer) is remembered.
"""

from __future__ import annotations

import logging

from aiohttp import web

log = logging.getLogger(__name__)


class ClientStream:
    """Writes to a prepared `StreamResponse` until the client goes away, then none."""

    __slots__ = ("_resp", "_what", "gone")

    def __init__(self, resp: web.StreamResponse, what: str) -> None:
        self._resp = resp
        self._what = what
        self.gone = False

    @classmethod
    async def open(cls, request: web.Request, what: str) -> ClientStream:
        """Prepare an SSE response for `request` (`what` names it in the debug line)."""
        resp = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await resp.prepare(request)
        return cls(resp, what)

    @property
    def response(self) -> web.StreamResponse:
        return self._resp

    async def write(self, data: bytes) -> None:
        if self.gone:
            return
        try:
            await self._resp.write(data)
        except ConnectionError as exc:  # aiohttp's ClientConnectionResetError is one
            self.gone = True
            log.debug("%s: the client went away (%s)", self._what, exc)

    async def end(self) -> web.StreamResponse:
        """Finish the stream (when the client is still there) and return the response."""
        if not self.gone:
            try:
                await self._resp.write_eof()
            except ConnectionError as exc:
                self.gone = True
                log.debug("%s: the client went away (%s)", self._what, exc)
        return self._resp
