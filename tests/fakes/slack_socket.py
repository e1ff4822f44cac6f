"""The Socket Mode half of the Slack fake: the websocket (hello, pongs unless gone silent,
acks), envelopes pushed or queued for the next connection, button presses, redelivery of what
was never acked, and disconnect requests."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from aiohttp import WSMsgType, web

from tests.fakes.base import Call


class SlackSocket:
    """Mixed into FakeSlack (which provides the attributes and helpers declared here)."""

    app_id: str
    team_id: str
    base_url: str
    sockets: list[web.WebSocketResponse]
    posted: list[dict[str, Any]]
    unacked: dict[str, dict[str, Any]]
    redeliver_on_connect: bool
    _silent: set[web.WebSocketResponse]

    if TYPE_CHECKING:  # provided by FakeSlack and EmulatorServer

        def record(self, call: Call) -> Call: ...
        async def _open_ws(self, request: web.Request, **kwargs: Any) -> web.WebSocketResponse: ...
        def _forget_ws(self, ws: web.WebSocketResponse) -> None: ...
        async def wait_until(self, predicate: Callable[[], bool], timeout: float = 5.0) -> None: ...
        def _payload(self, event: dict[str, Any]) -> dict[str, Any]: ...
        def next_ts(self) -> str: ...

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
