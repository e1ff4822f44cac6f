"""Loopback fake of Slack's Web API, Socket Mode and Events API push for slack-bolt 1.30 (async).

Point Bolt at it with ``AsyncApp(client=AsyncWebClient(token=fake.bot_token,
base_url=f"{url}/api/", retry_handlers=[]))``. Socket Mode then follows by itself, because
``apps.connections.open`` (called with the ``xapp-`` token) returns this server's ``ws://`` URL.
For HTTP mode, :meth:`FakeSlack.post_event` signs an ``event_callback`` exactly like Slack
(``v0`` HMAC over the bytes sent). API errors are HTTP 200 with ``ok: false``, rate limits 429
with ``Retry-After``; both surface as ``SlackApiError`` in the SDK.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import time
import uuid
from typing import Any

import aiohttp
from aiohttp import WSMsgType, web

from tests.fakes.base import Call, EmulatorServer, Failure, json_response


def sign(body: str, signing_secret: str, timestamp: str) -> str:
    """Slack request signature: ``v0=`` + hex HMAC-SHA256 of ``v0:{ts}:{body}``."""
    base = f"v0:{timestamp}:{body}".encode()
    return "v0=" + hmac.new(signing_secret.encode(), base, hashlib.sha256).hexdigest()


class FakeSlack(EmulatorServer):
    """Slack fake: auth.test, chat.postMessage, apps.connections.open and the Socket Mode ws."""

    #: Methods answered with plain ``{"ok": true}``.
    harmless_methods = frozenset(
        {
            "reactions.add",
            "reactions.remove",
            "chat.delete",
            "conversations.join",
            "assistant.threads.setStatus",
        }
    )

    def __init__(
        self,
        bot_token: str = "xoxb-fake-bot-token",
        app_token: str = "xapp-1-fake-app-token",
        *,
        signing_secret: str = "fake-signing-secret",
        team_id: str = "T0FAKE01",
        bot_user_id: str = "U0FAKEBOT",
        bot_id: str = "B0FAKEBOT",
        app_id: str = "A0FAKEAPP",
    ) -> None:
        self.bot_token, self.app_token, self.signing_secret = bot_token, app_token, signing_secret
        self.team_id, self.bot_user_id, self.bot_id, self.app_id = (
            team_id,
            bot_user_id,
            bot_id,
            app_id,
        )
        self.sockets: list[web.WebSocketResponse] = []
        self.files: dict[str, bytes] = {}
        self.posted: list[dict[str, Any]] = []  # bot messages (with "channel"), for replies
        self.pending_uploads: dict[str, dict[str, Any]] = {}  # file id → filename, data
        self.uploads: list[dict[str, Any]] = []  # files shared by the bot (D78)
        #: envelopes sent and not acked yet, by envelope id (redelivered like Slack does)
        self.unacked: dict[str, dict[str, Any]] = {}
        #: when True, a new socket first gets every envelope never acked (as Slack retries
        #: events an app did not acknowledge), and :meth:`queue_event` may be used while no
        #: socket is connected
        self.redeliver_on_connect = False
        self._silent: set[web.WebSocketResponse] = set()
        self._ts = itertools.count(100)
        self._session: aiohttp.ClientSession | None = None
        super().__init__()

    def _setup_routes(self, app: web.Application) -> None:
        app.router.add_route("*", "/api/{method}", self._handle)
        app.router.add_post("/upload/{file_id}", self._upload)
        app.router.add_get("/files/{file_id}/{name}", self._file)
        app.router.add_get("/link/", self._socket)

    def next_ts(self) -> str:
        """A unique, increasing Slack timestamp (``seconds.micro``)."""
        return f"{int(time.time())}.{next(self._ts):06d}"

    # -- event builders ---------------------------------------------------------------------

    def add_file(self, name: str, mime: str, data: bytes) -> dict[str, Any]:
        """A file users shared: the ``files[]`` entry of a ``file_share`` message event."""
        file_id = f"F{len(self.files) + 1:06d}"
        self.files[file_id] = data
        return {
            "id": file_id,
            "name": name,
            "mimetype": mime,
            "size": len(data),
            "url_private": f"{self.base_url}/files/{file_id}/{name}",
        }

    async def _file(self, request: web.Request) -> web.Response:
        token = request.headers.get("Authorization", "").removeprefix("Bearer ")
        call = self.record(
            Call("files.download", dict(request.match_info), token, request.path, "GET")
        )
        data = self.files.get(request.match_info["file_id"])
        if token != self.bot_token or data is None:
            call.status = 404  # Slack answers a login page; a 404 is close enough here
            return web.Response(status=404)
        return web.Response(body=data, content_type="application/octet-stream")

    def message_event(
        self,
        channel: str,
        text: str,
        *,
        channel_type: str = "im",
        user: str = "U0USER001",
        ts: str | None = None,
        thread_ts: str | None = None,
        bot_id: str | None = None,
        subtype: str | None = None,
    ) -> dict[str, Any]:
        """A ``message`` event (``channel_type`` im | channel | group | mpim)."""
        ts = ts or self.next_ts()
        event: dict[str, Any] = {
            "type": "message",
            "channel": channel,
            "channel_type": channel_type,
            "user": user,
            "text": text,
            "ts": ts,
            "event_ts": ts,
            "team": self.team_id,
        }
        if thread_ts:
            event["thread_ts"] = thread_ts
        if bot_id:
            event["bot_id"] = bot_id
        if subtype:
            event["subtype"] = subtype
        return event

    def app_mention(
        self,
        channel: str,
        text: str,
        *,
        user: str = "U0USER001",
        ts: str | None = None,
        thread_ts: str | None = None,
    ) -> dict[str, Any]:
        """An ``app_mention`` event; ``<@BOT>`` is prefixed unless already in ``text``."""
        mention = f"<@{self.bot_user_id}>"
        event = self.message_event(
            channel,
            text if mention in text else f"{mention} {text}",
            user=user,
            ts=ts,
            thread_ts=thread_ts,
        )
        event["type"] = "app_mention"
        del event["channel_type"]
        return event

    def event_callback(self, event: dict[str, Any]) -> dict[str, Any]:
        """Wrap an event in the ``event_callback`` envelope Slack pushes."""
        return {
            "token": "verification-token",
            "team_id": self.team_id,
            "api_app_id": self.app_id,
            "event": event,
            "type": "event_callback",
            "event_id": f"Ev{uuid.uuid4().hex[:10]}",
            "event_time": int(time.time()),
            "is_ext_shared_channel": False,
            "authorizations": [
                {
                    "enterprise_id": None,
                    "team_id": self.team_id,
                    "user_id": self.bot_user_id,
                    "is_bot": True,
                    "is_enterprise_install": False,
                }
            ],
        }

    def _payload(self, event: dict[str, Any]) -> dict[str, Any]:
        return (
            event
            if "event" in event or event.get("type") == "url_verification"
            else self.event_callback(event)
        )

    # -- HTTP Events API --------------------------------------------------------------------

    async def post_event(
        self,
        events_url: str,
        event: dict[str, Any],
        signing_secret: str | None = None,
        *,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, str]:
        """Sign and POST an event (bare events are wrapped in ``event_callback``).

        Returns ``(status, body)``. Bolt acks before its listener runs, so wait on the fake
        for the outbound call, not on this response.
        """
        body = json.dumps(self._payload(event))
        ts = str(int(time.time()))
        sent = {
            "Content-Type": "application/json",
            "X-Slack-Request-Timestamp": ts,
            "X-Slack-Signature": sign(body, signing_secret or self.signing_secret, ts),
            **(headers or {}),
        }
        if self._session is None:
            self._session = aiohttp.ClientSession()
        async with self._session.post(events_url, data=body.encode(), headers=sent) as resp:
            return resp.status, await resp.text()

    async def _on_stop(self) -> None:
        if self._session is not None:
            await self._session.close()

    # -- Socket Mode ------------------------------------------------------------------------

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        ws = await self._open_ws(request, autoping=False)  # pongs below, unless gone silent
        self.sockets.append(ws)
        self.record(Call("socket.connect", dict(request.query), None, request.path_qs, "GET"))
        await ws.send_json(
            {
                "type": "hello",
                "num_connections": len(self.sockets),
                "debug_info": {"host": "fake-slack"},
                "connection_info": {"app_id": self.app_id},
            }
        )
        if self.redeliver_on_connect:
            for envelope in list(self.unacked.values()):
                envelope["retry_attempt"] += 1
                envelope["retry_reason"] = "timeout"
                await ws.send_json(envelope)
        try:
            async for msg in ws:
                if msg.type == WSMsgType.PING:
                    if ws not in self._silent:
                        await ws.pong(msg.data)
                    continue
                if msg.type == WSMsgType.PONG:
                    continue
                if msg.type != WSMsgType.TEXT:
                    break
                data = json.loads(msg.data)
                if "envelope_id" in data:
                    self.unacked.pop(str(data["envelope_id"]), None)
                self.record(
                    Call(
                        "ack" if "envelope_id" in data else "socket.message",
                        data,
                        None,
                        request.path,
                        "WS",
                        None,
                    )
                )
        finally:
            self._forget_ws(ws)
            self._silent.discard(ws)
            self.sockets.remove(ws)
        return ws

    async def push_event(
        self, event: dict[str, Any], *, envelope_type: str = "events_api", retry_attempt: int = 0
    ) -> str:
        """Send an envelope over the newest socket; returns its ``envelope_id`` (see ``ack``).

        Waits (up to 5 s) for a connection, since the client may see its handshake complete
        before this server has registered the socket.
        """
        await self.wait_until(lambda: bool(self.live_sockets()))
        envelope_id = str(uuid.uuid4())
        payload = self._payload(event) if envelope_type == "events_api" else event
        envelope = {
            "envelope_id": envelope_id,
            "type": envelope_type,
            "payload": payload,
            "accepts_response_payload": envelope_type != "events_api",
            "retry_attempt": retry_attempt,
            "retry_reason": "timeout" if retry_attempt else "",
        }
        self.unacked[envelope_id] = envelope
        await self.live_sockets()[-1].send_json(envelope)
        return envelope_id

    async def press(self, channel: str, ts: str, label: str, *, user: str) -> str:
        """Press the Block Kit button `label` under the bot's message: a ``block_actions``
        payload in an ``interactive`` envelope, as Socket Mode delivers it."""
        shown = next(m for m in self.posted if m["channel"] == channel and m["ts"] == ts)
        button = next(
            e
            for b in shown.get("blocks") or []
            if b.get("type") == "actions"
            for e in b["elements"]
            if e["text"]["text"] == label
        )
        payload: dict[str, Any] = {
            "type": "block_actions",
            "user": {
                "id": user,
                "username": user.lower(),
                "name": user.lower(),
                "team_id": self.team_id,
            },
            "api_app_id": self.app_id,
            "token": "verification-token",
            "container": {"type": "message", "message_ts": ts, "channel_id": channel},
            "trigger_id": f"trigger.{self.next_ts()}",
            "team": {"id": self.team_id, "domain": "fake"},
            "channel": {"id": channel, "name": "directmessage"},
            "message": {"type": "message", "ts": ts, "text": shown["text"]},
            "response_url": f"{self.base_url}/actions/response",
            "actions": [
                {
                    "type": "button",
                    "action_id": button["action_id"],
                    "block_id": "b1",
                    "text": button["text"],
                    "value": button["value"],
                    "action_ts": self.next_ts(),
                }
            ],
        }
        if shown.get("thread_ts"):  # a message in a thread: Slack names the thread in both
            payload["container"]["thread_ts"] = shown["thread_ts"]
            payload["message"]["thread_ts"] = shown["thread_ts"]
        return await self.push_event(payload, envelope_type="interactive")

    async def queue_event(self, event: dict[str, Any]) -> str:
        """Like :meth:`push_event`, but without a connected app the envelope waits (unacked)
        for the next connection, where ``redeliver_on_connect`` sends it."""
        envelope_id = str(uuid.uuid4())
        envelope = {
            "envelope_id": envelope_id,
            "type": "events_api",
            "payload": self._payload(event),
            "accepts_response_payload": False,
            "retry_attempt": 0,
            "retry_reason": "",
        }
        self.unacked[envelope_id] = envelope
        live = self.live_sockets()
        if live:
            try:
                await live[-1].send_json(envelope)
            except (ConnectionError, RuntimeError):
                pass  # the app died: it stays unacked and comes again on the next connection
        return envelope_id

    def live_sockets(self) -> list[web.WebSocketResponse]:
        return [ws for ws in self.sockets if ws not in self._silent and not ws.closed]

    def go_silent(self) -> None:
        """Every open socket stays open but sends nothing more, pongs included."""
        self._silent.update(self.sockets)

    async def redeliver_unacked(self) -> int:
        """Send every envelope that was never acked again (``retry_attempt`` + 1), as Slack
        does; returns how many."""
        pending = list(self.unacked.values())
        self.unacked.clear()
        for envelope in pending:
            await self.push_event(envelope["payload"], retry_attempt=envelope["retry_attempt"] + 1)
        return len(pending)

    async def disconnect(self, reason: str = "refresh_requested") -> None:
        """Ask connected clients to reconnect (they call apps.connections.open again)."""
        for ws in list(self.sockets):
            await ws.send_json(
                {"type": "disconnect", "reason": reason, "debug_info": {"host": "fake-slack"}}
            )

    # -- Web API ----------------------------------------------------------------------------

    def _error(self, failure: Failure) -> web.Response:
        body: dict[str, Any] = {
            "ok": False,
            "error": "ratelimited" if failure.status == 429 else "internal_error",
        }
        body.update(failure.body or {})
        headers = dict(failure.headers)
        if failure.status == 429:
            headers.setdefault("Retry-After", str(int(failure.retry_after or 1)))
        return json_response(body, failure.status, headers)

    async def _handle(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        params: dict[str, Any] = dict(request.query)
        if request.content_type == "application/json":
            params.update(await request.json())
        else:
            params.update({k: v for k, v in (await request.post()).items() if isinstance(v, str)})
        token = request.headers.get("Authorization", "").removeprefix("Bearer ") or params.get(
            "token"
        )
        call = self.record(Call(method, params, token, request.path, request.method))
        if await self._stall(method):  # stall_next: no effect, no answer while the fake runs
            call.status = 504
            return self._error(Failure(504))
        failure = self._take_failure(method)
        if failure is not None:
            call.status = failure.status
            return self._error(failure)
        result = self._result(method, params, token)
        await self._hold(method)
        return json_response(result, headers={"x-oauth-scopes": "chat:write,app_mentions:read"})

    async def _upload(self, request: web.Request) -> web.Response:
        """Step 2 of files_upload_v2: the bytes, posted to the URL step 1 gave (D78)."""
        file_id = request.match_info["file_id"]
        if file_id not in self.pending_uploads:
            return web.Response(status=404, text="unknown upload")
        self.pending_uploads[file_id]["data"] = await request.read()
        self.record(Call("upload", {"file_id": file_id}, None, request.path))
        return web.Response(text="OK - 1")

    def _files(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """files.getUploadURLExternal and files.completeUploadExternal (D78): the completed
        files are shared in the channel as one message carrying them."""
        if method == "files.getUploadURLExternal":
            file_id = f"F{len(self.pending_uploads) + 1:08d}"
            self.pending_uploads[file_id] = {"filename": params.get("filename"), "data": None}
            return {
                "ok": True,
                "upload_url": f"{self.base_url}/upload/{file_id}",
                "file_id": file_id,
            }
        files = params.get("files")
        files = json.loads(files) if isinstance(files, str) else files or []
        done = []
        for f in files:
            pending = self.pending_uploads.get(str(f.get("id")))
            if pending is None or pending["data"] is None:
                return {"ok": False, "error": "file_not_found"}
            done.append({"id": f["id"], "name": pending["filename"], "title": f.get("title")})
            self.uploads.append({"channel": params.get("channel_id"), **pending})
        if params.get("channel_id"):
            ts = self.next_ts()
            message = {
                "type": "message",
                "text": params.get("initial_comment") or "",
                "user": self.bot_user_id,
                "bot_id": self.bot_id,
                "ts": ts,
                "files": done,
            }
            if params.get("thread_ts"):
                message["thread_ts"] = params["thread_ts"]
            self.posted.append({**message, "channel": params["channel_id"]})
        return {"ok": True, "files": done}

    def _result(self, method: str, params: dict[str, Any], token: str | None) -> dict[str, Any]:
        if method == "apps.connections.open":
            if token != self.app_token:
                return {
                    "ok": False,
                    "error": "not_allowed_token_type"
                    if token == self.bot_token
                    else "invalid_auth",
                }
            return {"ok": True, "url": f"{self.ws_url}/link/?ticket={uuid.uuid4()}"}
        if token != self.bot_token:
            return {
                "ok": False,
                "error": "not_allowed_token_type" if token == self.app_token else "invalid_auth",
            }
        if method == "auth.test":
            return {
                "ok": True,
                "url": "https://fake.slack.com/",
                "team": "Fake Team",
                "user": "crosstalk",
                "team_id": self.team_id,
                "user_id": self.bot_user_id,
                "bot_id": self.bot_id,
                "is_enterprise_install": False,
            }
        if method in ("files.getUploadURLExternal", "files.completeUploadExternal"):
            return self._files(method, params)
        if method == "chat.update":
            shown = next(
                (
                    m
                    for m in self.posted
                    if m["channel"] == params.get("channel") and m["ts"] == params.get("ts")
                ),
                None,
            )
            if shown is None:
                return {"ok": False, "error": "message_not_found"}
            if not params.get("text") and not params.get("blocks"):
                return {"ok": False, "error": "no_text"}
            shown["text"] = params.get("text", "")
            shown["edits"] = shown.get("edits", 0) + 1
            if "blocks" in params:  # an update without blocks keeps them, as Slack does
                shown["blocks"] = _blocks(params["blocks"])
            return {
                "ok": True,
                "channel": shown["channel"],
                "ts": shown["ts"],
                "text": shown["text"],
            }
        if method == "chat.postMessage":
            if not params.get("channel"):
                return {"ok": False, "error": "channel_not_found"}
            if not params.get("text") and not params.get("blocks"):
                return {"ok": False, "error": "no_text"}
            ts = params.get("ts") or self.next_ts()
            message = {
                "type": "message",
                "text": params.get("text", ""),
                "user": self.bot_user_id,
                "bot_id": self.bot_id,
                "app_id": self.app_id,
                "team": self.team_id,
                "ts": ts,
            }
            if params.get("thread_ts"):
                message["thread_ts"] = params["thread_ts"]
            metadata = params.get("metadata")
            if isinstance(metadata, str):  # form-encoded calls send it as a JSON string
                metadata = json.loads(metadata)
            if metadata:
                message["metadata"] = metadata
            if params.get("blocks"):
                message["blocks"] = _blocks(params["blocks"])
            self.posted.append({**message, "channel": params["channel"]})
            return {"ok": True, "channel": params["channel"], "ts": ts, "message": message}
        if method == "conversations.history":
            history = [
                {
                    k: v
                    for k, v in m.items()
                    if k != "channel"
                    and (
                        k != "metadata" or params.get("include_all_metadata") in (True, "true", "1")
                    )
                }
                for m in reversed(self.posted)
                if m["channel"] == params.get("channel")
            ]
            return {
                "ok": True,
                "messages": history[: int(params.get("limit") or 100)],
                "has_more": False,
            }
        if method == "conversations.replies":
            # Bolt 1.30 reads this for DM threads (assistant thread context) before say().
            thread = [
                {k: v for k, v in m.items() if k != "channel"}
                for m in self.posted
                if m["channel"] == params.get("channel")
                and params.get("ts") in (m["ts"], m.get("thread_ts"))
            ]
            return {"ok": True, "messages": thread, "has_more": False}
        if method in self.harmless_methods:
            return {"ok": True}
        return {"ok": False, "error": "unknown_method"}


def _blocks(raw: Any) -> list[dict[str, Any]]:
    """Blocks as sent: a JSON string in form-encoded calls, a list in JSON ones."""
    return list(json.loads(raw) if isinstance(raw, str) else raw or [])
