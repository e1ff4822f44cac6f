"""A recording, fault-injecting pass-through in front of the real homeserver.

The Matrix adapter talks to Synapse through this proxy, so a test can see what the bot asked
for (``send``, ``typing``, ``sync``, ``join``, ...) and make the next request of a kind fail the
way a homeserver does (429 ``M_LIMIT_EXCEEDED`` with ``retry_after_ms``, 403 ``M_FORBIDDEN``,
a 5xx). Everything else is Synapse's own answer: nothing of the protocol is emulated here.
"""

from __future__ import annotations

import json
import re
from typing import Any

import aiohttp
from aiohttp import web

from tests.fakes.base import Call, EmulatorServer, json_response
from tests.fakes.synapse import Homeserver

_ERRCODES = {429: "M_LIMIT_EXCEEDED", 403: "M_FORBIDDEN", 404: "M_NOT_FOUND"}
_HOP = {"host", "content-length", "transfer-encoding", "connection"}


def method_of(path: str) -> str:
    """A short name for a client-server API path: ``send``, ``typing``, ``sync``, ..."""
    m = re.match(r"^/_matrix/client/(?:v3|r0|v1)/(.*)$", path)
    rest = m.group(1) if m else path
    if re.match(r"^rooms/[^/]+/send/", rest):
        return "send"
    if re.match(r"^rooms/[^/]+/typing/", rest):
        return "typing"
    return rest.split("/")[0] if not rest.startswith("rooms/") else rest.split("/")[2]


class MatrixProxy(EmulatorServer):
    def __init__(self, server: Homeserver) -> None:
        self.server = server
        self.upstream = server.base_url.rstrip("/")
        self._http: aiohttp.ClientSession | None = None
        self._syncs: list[bytes] = []  # recent incremental /sync answers
        self._replay: list[bytes] = []
        self._after_upload = False  # the next send is the event naming an uploaded file
        super().__init__()

    def redeliver(self, event_id: str) -> None:
        """Answer the next incremental sync with the earlier answer that carried
        `event_id`, as a retried request served from a cache would: the same events again."""
        for body in reversed(self._syncs):
            if event_id.encode() in body:
                self._replay.append(body)
                return
        raise AssertionError(f"no sync answer carried {event_id}")

    def _setup_routes(self, app: web.Application) -> None:
        app.router.add_route("*", "/{tail:.*}", self._forward)

    async def _on_stop(self) -> None:
        if self._http is not None:
            await self._http.close()

    async def _forward(self, request: web.Request) -> web.StreamResponse:
        name = method_of(request.path)
        body = await request.read()
        params: dict[str, Any] = {}
        if body and request.content_type == "application/json":
            try:
                params = json.loads(body)
            except ValueError:
                params = {}
        params = params if isinstance(params, dict) else {"body": params}
        incremental = name == "sync" and "since" in request.query
        if incremental and self._replay:
            self.record(
                Call(name, {"replayed": True}, path=request.path, http_method=request.method)
            )
            return web.Response(body=self._replay.pop(0), content_type="application/json")
        failure = self._take_failure(name)
        if failure is not None:
            payload = {
                "errcode": _ERRCODES.get(failure.status, "M_UNKNOWN"),
                "error": "injected by the test",
                **(failure.body or {}),
            }
            if failure.retry_after is not None:
                payload["retry_after_ms"] = int(failure.retry_after * 1000)
            self.record(
                Call(
                    name,
                    params,
                    path=request.path,
                    http_method=request.method,
                    status=failure.status,
                )
            )
            return json_response(payload, failure.status)
        if self._http is None:
            self._http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=120))
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP}
        # recorded when asked (a typing request in flight counts from then on)
        call = self.record(
            Call(name, params, path=request.path, http_method=request.method, status=None)
        )
        async with self._http.request(
            request.method, self.upstream + request.path_qs, data=body or None, headers=headers
        ) as up:
            data = await up.read()
            if incremental and up.status == 200:
                self._syncs = [*self._syncs[-49:], data]
            out = web.Response(
                body=data, status=up.status, content_type=up.content_type or "application/json"
            )
        call.status = up.status
        if name == "send" and up.status == 200:
            call.params = {**params, "_event_id": json.loads(data).get("event_id")}
        self._notify()
        if request.path.startswith("/_matrix/media/") and request.method == "POST":
            self._after_upload = True
        elif name == "send" and self._after_upload:
            self._after_upload = False
            await self._hold("sendMedia")  # hold_next("sendMedia"): a file's event (D78)
        return out
