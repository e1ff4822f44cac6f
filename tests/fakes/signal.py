"""Loopback fake of a signal-cli daemon started with ``--http`` (one account).

* ``GET /api/v1/check`` → 200.
* ``POST /api/v1/rpc``: JSON-RPC 2.0 (``Content-Type: application/json`` or 415): ``send``
  (``recipient`` list or ``groupId``, ``message``, ``textStyle``, ``attachments`` as data URIs
  ``data:<mime>[;filename=<name>];base64,<data>``), ``sendTyping``,
  ``sendReceipt``, ``getAttachment``; answers ``{"timestamp", "results": [{"type": ...}]}`` as
  signal-cli does, errors ``{"error": {"code", "message"}}`` with HTTP 200.
* ``GET /api/v1/events?account=…``: server-sent events ``id:<start>-<seq>`` / ``event:receive``
  / ``data:{"envelope": …, "account": …}``, a ``:`` keep-alive every ``keepalive`` seconds
  (15 in signal-cli; 0.2 here, so a closed client is noticed at once). The last 1000 events
  are kept; a client that sends ``Last-Event-ID`` first gets those after it (an unknown id
  gets all of them), as the daemon does. An unknown ``account`` is a 400.

People write with :meth:`FakeSignal.user_message`; :meth:`disconnect` drops every stream,
:meth:`restart` also forgets the kept events and starts a new id series (a daemon restart).
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import time
from collections import deque
from typing import Any

from aiohttp import web

from tests.fakes.base import Call, EmulatorServer, json_response

GROUP_MEMBERS = ("+15550000101", "+15550000102")


class FakeSignal(EmulatorServer):
    """One Signal account in a fake signal-cli daemon."""

    client_max_size = 140 * 1024 * 1024  # a 100 MB attachment, base64 in JSON

    def __init__(self, account: str = "+15550009999", *, keepalive: float = 0.2) -> None:
        self.account = account
        self.keepalive = keepalive
        self.prefix = f"{int(time.time() * 1000)}-"
        self._seq = itertools.count(1)
        self._stamp = itertools.count(int(time.time() * 1000))
        self.kept: deque[tuple[int, str]] = deque(maxlen=1000)
        self.streams: list[asyncio.Queue[tuple[int, str] | None]] = []
        self.sent: list[dict[str, Any]] = []  # messages signal-cli sent for the bot
        #: files sent for the bot: to, mime, filename, data, caption, timestamp (D78)
        self.sent_media: list[dict[str, Any]] = []
        self.attachments: dict[str, bytes] = {}
        self.unregistered: set[str] = set()
        self.silent = False  # no keep-alives, no events: a stream that hangs
        self.swallowed = 0  # events a silent stream took and never showed
        super().__init__()

    def _setup_routes(self, app: web.Application) -> None:
        app.router.add_get("/api/v1/check", self._check)
        app.router.add_post("/api/v1/rpc", self._rpc)
        app.router.add_get("/api/v1/events", self._events)

    def config(self, **over: Any) -> dict[str, Any]:
        """The ``channels.signal`` section that points a gateway at this fake."""
        return {"account": self.account, "httpUrl": self.base_url, **over}

    def timestamp(self) -> int:
        return next(self._stamp)

    # -- what people do ---------------------------------------------------------------------

    def envelope(
        self,
        source: str,
        text: str | None,
        *,
        name: str | None = None,
        group_id: str | None = None,
        mentions: list[dict[str, Any]] | None = None,
        attachments: list[dict[str, Any]] | None = None,
        quote: dict[str, Any] | None = None,
        timestamp: int | None = None,
        uuid: str | None = None,
    ) -> dict[str, Any]:
        """One ``receive`` event body with a data message."""
        ts = timestamp if timestamp is not None else self.timestamp()
        data: dict[str, Any] = {
            "timestamp": ts,
            "message": text,
            "expiresInSeconds": 0,
            "viewOnce": False,
        }
        if group_id is not None:
            data["groupInfo"] = {
                "groupId": group_id,
                "groupName": "Team",
                "revision": 3,
                "type": "DELIVER",
            }
        if mentions:
            data["mentions"] = mentions
        if attachments:
            data["attachments"] = attachments
        if quote:
            data["quote"] = quote
        return {
            "envelope": {
                "source": source,
                "sourceNumber": source,
                "sourceUuid": uuid or f"00000000-0000-4000-8000-{source.lstrip('+').zfill(12)}",
                "sourceName": name,
                "sourceDevice": 1,
                "timestamp": ts,
                "serverReceivedTimestamp": ts + 5,
                "serverDeliveredTimestamp": ts + 9,
                "dataMessage": data,
            },
            "account": self.account,
        }

    def mention_of_bot(self, start: int = 0) -> dict[str, Any]:
        return {
            "name": self.account,
            "number": self.account,
            "uuid": "00000000-0000-4000-8000-000000000bot",
            "start": start,
            "length": 1,
        }

    def user_message(self, source: str, text: str | None, **kw: Any) -> dict[str, Any]:
        """A person writes; returns the event body (for :meth:`redeliver`)."""
        body = self.envelope(source, text, **kw)
        self.push(body)
        return body

    def add_attachment(self, data: bytes, mime: str, filename: str | None = None) -> dict[str, Any]:
        att_id = f"att{next(self._seq)}.bin"
        self.attachments[att_id] = data
        return {
            "contentType": mime,
            "filename": filename,
            "id": att_id,
            "size": len(data),
            "width": None,
            "height": None,
            "caption": None,
            "uploadTimestamp": None,
        }

    def push(self, body: dict[str, Any]) -> int:
        """Keep an event and send it to every open stream; returns its sequence number."""
        seq = next(self._seq)
        data = json.dumps(body)
        self.kept.append((seq, data))
        for queue in self.streams:
            queue.put_nowait((seq, data))
        self._notify()
        return seq

    def redeliver(self, body: dict[str, Any]) -> int:
        """The same message once more, as a new event (what a replay looks like)."""
        return self.push(body)

    async def disconnect(self) -> None:
        """Drop every open stream (the client reconnects with ``Last-Event-ID``)."""
        for queue in self.streams:
            queue.put_nowait(None)
        await self.wait_until(lambda: not self.streams)

    async def restart(self) -> None:
        """A daemon restart: streams dropped, kept events forgotten, a new id series."""
        await self.disconnect()
        self.kept.clear()
        self.prefix = f"{int(time.time() * 1000) + 1}-"

    async def _on_stop(self) -> None:
        for queue in self.streams:
            queue.put_nowait(None)

    # -- HTTP -------------------------------------------------------------------------------

    async def _check(self, request: web.Request) -> web.Response:
        self.record(Call("check", {}, None, request.path, "GET"))
        return web.Response(status=200)

    def _after(self, last_id: str | None) -> list[tuple[int, str]]:
        if last_id is None:
            return []
        seq = 0
        if last_id.startswith(self.prefix):
            try:
                seq = int(last_id[len(self.prefix) :])
            except ValueError:
                seq = 0
        return [(s, d) for s, d in self.kept if s > seq]

    async def _events(self, request: web.Request) -> web.StreamResponse:
        account = request.query.get("account")
        last_id = request.headers.get("Last-Event-ID")
        call = self.record(
            Call(
                "events.connect",
                {"account": account, "lastEventId": last_id},
                None,
                request.path_qs,
                "GET",
            )
        )
        if account not in (None, "", self.account):
            call.status = 400
            return web.Response(status=400)
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        queue: asyncio.Queue[tuple[int, str] | None] = asyncio.Queue()
        for missed in self._after(last_id):  # the missed ones first, then the live ones
            queue.put_nowait(missed)
        self.streams.append(queue)
        self._notify()
        try:
            while not self._stopping.is_set():
                try:
                    item = await asyncio.wait_for(queue.get(), self.keepalive)
                except TimeoutError:
                    if not self.silent:
                        await resp.write(b":\n")
                    continue
                if item is None:
                    break
                if self.silent:
                    self.swallowed += 1
                    self._notify()
                    continue
                seq, data = item
                await resp.write(f"id:{self.prefix}{seq}\nevent:receive\ndata:{data}\n\n".encode())
        except (ConnectionError, RuntimeError):
            pass  # the client went away
        finally:
            self.streams.remove(queue)
            self._notify()
        return resp

    async def _rpc(self, request: web.Request) -> web.Response:
        if not request.headers.get("Content-Type", "").startswith("application/json"):
            return web.Response(status=415)
        body = await request.json()
        method, params, rid = body.get("method"), body.get("params") or {}, body.get("id")
        call = self.record(Call(str(method), params, None, request.path, "POST"))
        failure = self._take_failure(str(method))
        if failure is not None:
            call.status = failure.status
            if failure.status != 200:
                return json_response({}, failure.status, failure.headers)
            return json_response({"jsonrpc": "2.0", "id": rid, **(failure.body or {})})
        if params.get("account") not in (None, self.account):
            return self._error(rid, -32602, "Specified account does not exist")
        handler = {
            "send": self._send,
            "sendTyping": self._typing,
            "sendReceipt": self._receipt,
            "getAttachment": self._attachment,
        }.get(str(method))
        if handler is None:
            return self._error(rid, -32601, "Method not implemented")
        result = handler(params)
        if isinstance(result, web.Response):
            return result
        await self._hold("sendMedia" if method == "send" and params.get("attachments") else method)
        return json_response({"jsonrpc": "2.0", "result": result, "id": rid})

    @staticmethod
    def _error(rid: Any, code: int, message: str) -> web.Response:
        return json_response(
            {"jsonrpc": "2.0", "error": {"code": code, "message": message, "data": None}, "id": rid}
        )

    def _recipients(self, params: dict[str, Any]) -> tuple[str, list[str]] | None:
        group = params.get("groupId")
        if group:
            return f"group:{group}", list(GROUP_MEMBERS)
        recipients = params.get("recipient")
        recipients = [recipients] if isinstance(recipients, str) else list(recipients or [])
        return (recipients[0], recipients) if len(recipients) == 1 else None

    @staticmethod
    def _files(params: dict[str, Any]) -> list[dict[str, Any]] | None:
        """The data-URI attachments of a send; None when one is not a valid data URI."""
        out = []
        for uri in params.get("attachments") or []:
            head, sep, data = str(uri).partition(";base64,")
            if not sep or not head.startswith("data:"):
                return None
            mime, *rest = head.removeprefix("data:").split(";")
            names = [r.removeprefix("filename=") for r in rest if r.startswith("filename=")]
            try:
                raw = base64.b64decode(data, validate=True)
            except ValueError:
                return None
            out.append({"mime": mime, "filename": names[0] if names else None, "data": raw})
        return out

    def _send(self, params: dict[str, Any]) -> dict[str, Any] | web.Response:
        where = self._recipients(params)
        files = self._files(params)
        if files is None:
            return self._error(None, -1, "Failed to send message: invalid attachment")
        if where is None or not (params.get("message") or files):
            return self._error(None, -1, "Sending empty message is not allowed")
        to, members = where
        ts = self.timestamp()
        results = [
            {
                "recipientAddress": {"uuid": None, "number": m},
                "type": "UNREGISTERED_FAILURE" if m in self.unregistered else "SUCCESS",
            }
            for m in members
        ]
        if files and any(r["type"] == "SUCCESS" for r in results):
            caption = params.get("message") or None
            for f in files:
                self.sent_media.append({"to": to, **f, "caption": caption, "timestamp": ts})
            self._notify()
        elif any(r["type"] == "SUCCESS" for r in results):
            styles = params.get("textStyle") or []
            self.sent.append(
                {
                    "to": to,
                    "text": params["message"],
                    "textStyle": [styles] if isinstance(styles, str) else styles,
                    "timestamp": ts,
                }
            )
            self._notify()
        return {"timestamp": ts, "results": results}

    def _typing(self, params: dict[str, Any]) -> dict[str, Any] | web.Response:
        if self._recipients(params) is None:
            return self._error(None, -1, "No recipients given")
        return {"timestamp": self.timestamp(), "results": []}

    def _receipt(self, params: dict[str, Any]) -> dict[str, Any] | web.Response:
        if not params.get("recipient") or not params.get("targetTimestamp"):
            return self._error(None, -1, "No recipient or timestamps given")
        return {"timestamp": self.timestamp(), "results": []}

    def _attachment(self, params: dict[str, Any]) -> dict[str, Any] | web.Response:
        data = self.attachments.get(str(params.get("id")))
        if data is None:
            return self._error(
                None, -1, f"An error occurred reading attachment: {params.get('id')}"
            )
        return {"data": base64.b64encode(data).decode()}
