"""Connections the gateway accepts: a bounded number, none kept open idle (issue 25, D141).

aiohttp closes a connection that has not delivered a whole request within its keep-alive
timeout (the timer starts when the connection opens and again after each response), so that
timeout is our header read timeout: a client trickling headers, or saying nothing, is closed
after `gateway.headerTimeoutSeconds`. At `gateway.maxConnections` open connections, a new one
makes room by closing the oldest connection that is not serving a request (a slow or idle
client); when every one is busy, the new one is closed at once. So slow clients can never use
up the process's file descriptors, and a flood of them never keeps a real request out.
"""

from __future__ import annotations

import asyncio
import logging
from http import HTTPStatus
from typing import Any

from aiohttp import web
from aiohttp.web_protocol import RequestHandler
from aiohttp.web_request import BaseRequest

log = logging.getLogger(__name__)


class GatewayRunner(web.AppRunner):
    """The gateway app's runner with D141's limits on its connections."""

    def __init__(
        self, app: web.Application, *, max_connections: int, header_timeout: float, **kw: Any
    ) -> None:
        super().__init__(app, keepalive_timeout=header_timeout, **kw)
        self.max_connections = max_connections
        self.refused = 0
        """Connections closed at once because `max_connections` were open."""

    async def _make_server(self) -> web.Server:
        server = await super()._make_server()
        server.__class__ = _GatewayServer  # its connections answer aiohttp's own errors in JSON
        admit = server.connection_made

        def connection_made(handler: RequestHandler, transport: asyncio.Transport) -> None:
            admit(handler, transport)
            open_now = server.connections
            if len(open_now) <= self.max_connections:
                return
            idle = next((h for h in open_now if h is not handler and not _busy(h)), None)
            closing = idle or handler
            self.refused += 1
            if self.refused == 1 or self.refused % 1000 == 0:  # a flood logs a line per 1000
                log.warning(
                    "connection limit reached (%d open): %d connection(s) closed so far",
                    self.max_connections,
                    self.refused,
                )
            closing.force_close()
            if closing.transport is not None:
                closing.transport.abort()

        server.connection_made = connection_made  # type: ignore[method-assign]
        return server


def _busy(handler: RequestHandler) -> bool:
    """The connection is serving a request (aiohttp keeps no public flag for it)."""
    return bool(getattr(handler, "_request_in_progress", True))


class _JsonErrors(RequestHandler):
    """aiohttp's own 4xx and 5xx (a request line over 8 KB, a malformed header) in our JSON
    error shape, as every route's (D141), instead of text/plain."""

    __slots__ = ()

    def handle_error(
        self,
        request: BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        super().handle_error(request, status, exc, message)  # logs; refuses a sent response
        try:
            reason = HTTPStatus(status).phrase
        except ValueError:
            reason = "Error"
        kind = "invalid_request_error" if status < 500 else "server_error"
        resp = web.json_response({"error": {"message": reason, "type": kind}}, status=status)
        resp.force_close()
        return resp


class _GatewayServer(web.Server):
    """The app's server, making :class:`_JsonErrors` connections."""

    __slots__ = ()

    def __call__(self) -> RequestHandler:
        return _JsonErrors(self, loop=self._loop, **self._kwargs)
