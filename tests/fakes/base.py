"""Shared plumbing for the loopback platform fakes (Telegram, Discord, Slack).

Each fake is a small aiohttp server that the *real* client library talks to. The base class owns
what every fake needs and what is easy to get subtly wrong in tests:

* binding ``127.0.0.1`` on port 0 (parallel-safe, never reachable from outside);
* a shutdown that cannot hang: websockets are closed, long-polls are woken and the runner uses
  ``shutdown_timeout=1`` (aiohttp's default would wait up to 60 s for a held request);
* a record of every call plus :meth:`EmulatorServer.wait_for`, which waits on an event with a
  deadline instead of sleeping, so tests are both fast and deterministic;
* one-shot failure injection (:meth:`EmulatorServer.fail_next`) whose response body each fake
  shapes like its platform does;
* held answers (:meth:`EmulatorServer.hold_next`): a call takes effect and its answer waits, so
  a test can kill the client between a send and its receipt (D16).
"""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass
class Call:
    """One request the client made (REST call, gateway op or socket ack).

    ``method`` is the platform's own name (``sendMessage``, ``createMessage``, ``IDENTIFY``,
    ``chat.postMessage``, ...), ``params`` the decoded body, ``token`` the credential presented
    and ``status`` the HTTP status the fake answered with (``None`` for websocket traffic).
    """

    method: str
    params: dict[str, Any]
    token: str | None = None
    path: str = ""
    http_method: str = "POST"
    status: int | None = 200


@dataclass
class Failure:
    """A queued injected error: answered instead of the next matching call."""

    status: int
    body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    retry_after: float | None = None


def json_response(
    payload: Any, status: int = 200, headers: dict[str, str] | None = None
) -> web.Response:
    """JSON reply with a content type of exactly ``application/json``.

    ``web.json_response`` appends ``; charset=utf-8``, which discord.py does not recognise as JSON
    (it compares the header verbatim), so every fake answers through this helper.
    """
    return web.Response(
        body=json.dumps(payload).encode(),
        status=status,
        headers=headers,
        content_type="application/json",
    )


class EmulatorServer:
    """Base class: an aiohttp app on 127.0.0.1:0 with a call log and failure injection."""

    #: the largest request body the fake reads (aiohttp's default, 1 MB, unless a platform's
    #: uploads need more)
    client_max_size: int = 1024**2

    def __init__(self) -> None:
        self.calls: list[Call] = []
        self.base_url: str = ""
        self.port: int = 0
        self.app = web.Application(client_max_size=self.client_max_size)
        self._failures: dict[str, deque[Failure]] = defaultdict(deque)
        self._holds: dict[str, int] = defaultdict(int)
        self._stalls: dict[str, int] = defaultdict(int)
        #: calls whose answer is being held now (see :meth:`hold_next`)
        self.held: list[str] = []
        #: calls stalled now, without effect (see :meth:`stall_next`)
        self.stalled: list[str] = []
        self._changed = asyncio.Event()
        self._stopping = asyncio.Event()
        self._websockets: set[web.WebSocketResponse] = set()
        self._runner: web.AppRunner | None = None
        self._setup_routes(self.app)

    def _setup_routes(self, app: web.Application) -> None:
        """Subclasses add their routes here."""
        raise NotImplementedError

    async def start(self) -> str:
        """Bind 127.0.0.1 on a free port and return the base URL (``http://127.0.0.1:PORT``)."""
        self._runner = web.AppRunner(self.app, shutdown_timeout=1, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]
        self.base_url = f"http://127.0.0.1:{self.port}"
        return self.base_url

    async def stop(self) -> None:
        """Close sockets, release held requests, then shut the server down (bounded time)."""
        self._stopping.set()
        self._notify()
        for ws in list(self._websockets):
            await ws.close(code=1001, message=b"server stopping")
        await self._on_stop()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _on_stop(self) -> None:
        """Hook for subclasses (close their own client sessions)."""

    @property
    def ws_url(self) -> str:
        return self.base_url.replace("http://", "ws://", 1)

    # -- call log ---------------------------------------------------------------------------

    def _notify(self) -> None:
        """Wake every waiter; they re-check their condition against ``calls``."""
        self._changed.set()
        self._changed = asyncio.Event()

    def record(self, call: Call) -> Call:
        self.calls.append(call)
        self._notify()
        return call

    def calls_for(self, method: str) -> list[Call]:
        return [c for c in self.calls if c.method == method]

    async def wait_for(
        self,
        method: str,
        count: int = 1,
        timeout: float = 5.0,
    ) -> list[Call]:
        """Wait until ``count`` calls of ``method`` were recorded; return all of them so far.

        Raises ``AssertionError`` (listing what *was* called) when the deadline passes.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            found = self.calls_for(method)
            if len(found) >= count:
                return found
            remaining = deadline - loop.time()
            if remaining <= 0:
                seen = [c.method for c in self.calls]
                raise AssertionError(
                    f"{type(self).__name__}: expected {count}x {method!r} within {timeout}s, "
                    f"got {len(found)}; calls so far: {seen}"
                )
            try:
                await asyncio.wait_for(self._changed.wait(), remaining)
            except TimeoutError:
                pass

    async def wait_until(
        self,
        predicate: Callable[[], bool],
        timeout: float = 5.0,
    ) -> None:
        """Wait (with a deadline) until ``predicate()`` is true; re-checked on every new call."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not predicate():
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise AssertionError(f"{type(self).__name__}: condition not met in {timeout}s")
            try:
                await asyncio.wait_for(self._changed.wait(), remaining)
            except TimeoutError:
                pass

    # -- failure injection ------------------------------------------------------------------

    def fail_next(
        self,
        method: str,
        status: int,
        body: dict[str, Any] | None = None,
        *,
        headers: dict[str, str] | None = None,
        retry_after: float | None = None,
        times: int = 1,
    ) -> None:
        """Answer the next ``times`` calls of ``method`` with an error instead of success.

        With ``body=None`` each fake builds its platform's error shape for ``status``;
        a given ``body`` is merged over that shape. ``retry_after`` feeds rate-limit fields.
        """
        for _ in range(times):
            self._failures[method].append(Failure(status, body, dict(headers or {}), retry_after))

    def hold_next(self, method: str, times: int = 1) -> None:
        """The next ``times`` calls of ``method`` take effect (the message is shown), then their
        answer is held until the fake stops: the client never sees its receipt, as when the
        process is killed between a send and the platform's answer (D16)."""
        self._holds[method] += times

    def stall_next(self, method: str, times: int = 1) -> None:
        """The next ``times`` calls of ``method`` take no effect and get no answer until the
        fake stops: the platform hangs, and the client's own timeout is what ends the call."""
        self._stalls[method] += times

    async def _stall(self, method: str) -> bool:
        """Each fake that supports :meth:`stall_next` awaits this before a call takes effect;
        True: the call was stalled (answer it with an error, it did nothing)."""
        if self._stalls.get(method, 0) <= 0:
            return False
        self._stalls[method] -= 1
        self.stalled.append(method)
        self._notify()
        await self._stopping.wait()
        return True

    async def _hold(self, method: str) -> None:
        """Each fake awaits this after a call took effect and before answering it."""
        if self._holds.get(method, 0) <= 0:
            return
        self._holds[method] -= 1
        self.held.append(method)
        self._notify()
        await self._stopping.wait()

    def _take_failure(self, method: str) -> Failure | None:
        queue = self._failures.get(method)
        return queue.popleft() if queue else None

    # -- websockets -------------------------------------------------------------------------

    async def _open_ws(self, request: web.Request, **kwargs: Any) -> web.WebSocketResponse:
        """Prepare a server websocket that :meth:`stop` will close."""
        kwargs.setdefault("autoping", True)
        ws = web.WebSocketResponse(**kwargs)
        await ws.prepare(request)
        self._websockets.add(ws)
        return ws

    def _forget_ws(self, ws: web.WebSocketResponse) -> None:
        self._websockets.discard(ws)
