"""`/mcp` on the gateway port: the MCP server over streamable HTTP (bearer token, D9 auth).

The `mcp` SDK's transport is an ASGI app; this module bridges one aiohttp request into it.
The SDK is imported, and its session manager started, on the first `/mcp` request only, so an
idle gateway does not pay for it. Stateless JSON responses: every POST is answered in full.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from aiohttp import web

from core.edge.http.appkeys import RUNTIME, SECRET
from core.edge.http.auth import is_authorized, unauthorized
from core.features.mcp import MISSING_EXTRA, mcp_installed

log = logging.getLogger(__name__)


class McpEndpoint:
    def __init__(self) -> None:
        self._manager: Any = None
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._lock = asyncio.Lock()

    async def _ensure(self, app: web.Application) -> Any:
        async with self._lock:
            if self._manager is not None:
                return self._manager
            from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

            from core.edge.mcp.server import build_server

            sdk_log = logging.getLogger("mcp.server.streamable_http")
            if sdk_log.level == logging.NOTSET:  # its INFO line per request is not news (D134)
                sdk_log.setLevel(logging.WARNING)

            manager = StreamableHTTPSessionManager(
                build_server(app[RUNTIME]), json_response=True, stateless=True
            )
            started: asyncio.Future[None] = asyncio.get_running_loop().create_future()

            async def hold() -> None:
                async with manager.run():
                    started.set_result(None)
                    await self._stop.wait()

            self._task = asyncio.create_task(hold(), name="mcp-http")
            await asyncio.wait({started, self._task}, return_when=asyncio.FIRST_COMPLETED)
            if not started.done():
                raise RuntimeError("the MCP session manager failed to start")
            self._manager = manager
            return manager

    async def close(self, _app: web.Application) -> None:
        self._stop.set()
        if self._task is not None:
            done, _ = await asyncio.wait({self._task}, timeout=3)
            if not done:
                self._task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await self._task

    async def handle(self, request: web.Request) -> web.StreamResponse:
        if not is_authorized(request, request.app[SECRET]):
            return unauthorized()
        if not mcp_installed():
            return web.json_response(
                {"error": {"message": MISSING_EXTRA, "type": "not_implemented"}}, status=501
            )
        manager = await self._ensure(request.app)
        return await call_asgi(manager.handle_request, request)


async def call_asgi(app: Any, request: web.Request) -> web.StreamResponse:
    """Run one aiohttp request through an ASGI app and stream its answer back."""
    body = await request.read()
    sent_body = False
    finished = asyncio.Event()
    response: web.StreamResponse | None = None
    host, port = request.host.partition(":")[0], request.url.port or 80
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.raw_path.split("?")[0].encode(),
        "root_path": "",
        "query_string": request.query_string.encode(),
        "headers": [(k.lower(), v) for k, v in request.raw_headers],
        "server": (host, port),
        "client": (request.remote or "", 0),
    }

    gone = asyncio.Event()

    async def receive() -> dict[str, Any]:
        nonlocal sent_body
        if not sent_body:
            sent_body = True
            return {"type": "http.request", "body": body, "more_body": False}
        await _until_gone(request, finished, gone)
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal response
        if gone.is_set():
            return
        try:
            if message["type"] == "http.response.start":
                response = web.StreamResponse(status=message["status"])
                for k, v in message.get("headers", []):
                    response.headers.add(k.decode("latin-1"), v.decode("latin-1"))
                await response.prepare(request)
            elif message["type"] == "http.response.body" and response is not None:
                await response.write(message.get("body", b""))
                if not message.get("more_body", False):
                    await response.write_eof()
        except ConnectionError as exc:  # the client left: expected, not the app's error (D134)
            log.debug("%s %s: the client went away (%s)", request.method, request.path, exc)
            gone.set()

    try:
        await app(scope, receive, send)
    finally:
        finished.set()
    return response if response is not None else web.Response(status=500)


async def _until_gone(request: web.Request, finished: asyncio.Event, gone: asyncio.Event) -> None:
    """Until the app is done, or the client has left: a failed write says so at once, a
    closed connection within a second (aiohttp has no event for it when handlers are not
    cancelled). An MCP client's event stream (`GET /mcp`, as MCP Inspector opens) then ends
    as the SDK expects, on `http.disconnect`, instead of failing a write at shutdown."""
    waiters = [asyncio.ensure_future(finished.wait()), asyncio.ensure_future(gone.wait())]
    try:
        while True:
            transport = request.transport
            if transport is None or transport.is_closing():
                log.debug("%s %s: the client went away", request.method, request.path)
                gone.set()
                return
            done, _ = await asyncio.wait(waiters, timeout=1.0, return_when=asyncio.FIRST_COMPLETED)
            if done:
                return
    finally:
        for waiter in waiters:
            waiter.cancel()


def register(app: web.Application) -> None:
    endpoint = McpEndpoint()
    app.router.add_route("*", "/mcp", endpoint.handle)
    app.on_cleanup.append(endpoint.close)
