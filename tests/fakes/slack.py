"""Loopback fake of Slack's Web API, Socket Mode and Events API push for slack-bolt 1.30 (async).

Point Bolt at it with ``AsyncApp(client=AsyncWebClient(token=fake.bot_token,
base_url=f"{url}/api/", retry_handlers=[]))``. Socket Mode then follows by itself, because
``apps.connections.open`` (called with the ``xapp-`` token) returns this server's ``ws://`` URL.
For HTTP mode, :meth:`FakeSlack.post_event` signs an ``event_callback`` exactly like Slack
(``v0`` HMAC over the bytes sent). API errors are HTTP 200 with ``ok: false``, rate limits 429
with ``Retry-After``; both surface as ``SlackApiError`` in the SDK. Socket Mode is in
:mod:`tests.fakes.slack_socket`, the Web API in :mod:`tests.fakes.slack_web`.
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
from aiohttp import web

from tests.fakes.base import Call, EmulatorServer
from tests.fakes.slack_socket import SlackSocket
from tests.fakes.slack_web import SlackWebApi


def sign(body: str, signing_secret: str, timestamp: str) -> str:
    """Slack request signature: ``v0=`` + hex HMAC-SHA256 of ``v0:{ts}:{body}``."""
    base = f"v0:{timestamp}:{body}".encode()
    return "v0=" + hmac.new(signing_secret.encode(), base, hashlib.sha256).hexdigest()


class FakeSlack(SlackSocket, SlackWebApi, EmulatorServer):
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
