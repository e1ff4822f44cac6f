"""The built-in web chat: a static page plus a WebSocket on the gateway's own server.

Whoever holds the gateway token is the web chat's user and its owner (decision D4). Inbound
messages go through the router like any platform's; replies come back through the outbound
gate to `send_text`, which pushes them to the sockets of that chat.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiohttp import WSMsgType, web

from adapters.base import AdapterStatus, ChannelAdapter, InboundSink, SendReceipt
from core.delivery_context import DeliveryContext
from core.errors import ChannelUnavailable
from core.gateway.appkeys import SECRET
from core.gateway.auth import is_authorized
from core.inbound import InboundMessage
from core.store import now_ms
from core.text import clean_text

if TYPE_CHECKING:
    from core.runtime import Runtime

log = logging.getLogger(__name__)
PAGE = Path(__file__).parent / "static" / "index.html"
MAX_TEXT = 32_000


class WebchatAdapter(ChannelAdapter):
    channel = "webchat"
    text_limit = MAX_TEXT

    def __init__(self, runtime: Runtime, account_id: str = "default") -> None:
        self.rt = runtime
        self.account_id = account_id
        self._sink: InboundSink | None = None
        self._sockets: dict[str, set[web.WebSocketResponse]] = {}

    def mount(self, app: web.Application) -> None:
        app.router.add_get("/", self._page)
        app.router.add_get("/ws", self._ws)

    async def start(self, sink: InboundSink) -> None:
        self._sink = sink

    async def stop(self) -> None:
        for sockets in list(self._sockets.values()):
            for ws in list(sockets):
                await ws.close()
        self._sockets.clear()

    def status(self) -> AdapterStatus:
        clients = sum(len(s) for s in self._sockets.values())
        return AdapterStatus(self.channel, self.account_id,
                             "connected" if self._sink else "stopped",
                             extra={"clients": str(clients)})

    async def send_text(self, target: DeliveryContext, text: str) -> SendReceipt:
        sockets = self._sockets.get(target.to or "")
        if not sockets:
            raise ChannelUnavailable(f"no web chat client connected for {target.to}")
        await self._broadcast(target.to or "", {"type": "message", "role": "assistant",
                                                "text": text})
        return SendReceipt()

    async def send_preview(self, target: DeliveryContext, run_id: str, text: str) -> None:
        await self._broadcast(target.to or "", {"type": "delta", "runId": run_id, "text": text})

    async def _broadcast(self, peer: str, payload: dict[str, Any]) -> None:
        data = json.dumps(payload, ensure_ascii=False)
        for ws in list(self._sockets.get(peer, ())):
            if not ws.closed:
                await ws.send_str(data)

    async def _page(self, request: web.Request) -> web.Response:
        return web.Response(body=PAGE.read_bytes(), content_type="text/html", charset="utf-8")

    async def _history(self) -> list[dict[str, Any]]:
        key = self.rt.keys.main_session_key(self.rt.config.default_agent_id())
        entry = await self.rt.store.get_session(key)
        if entry is None:
            return []
        msgs = await self.rt.store.history(entry.session_id, limit=100, include_tools=False)
        return [{"role": m.role, "text": m.plain_text()} for m in msgs if m.plain_text()]

    async def _ws(self, request: web.Request) -> web.StreamResponse:
        if not is_authorized(request, request.app[SECRET]):
            return web.json_response({"error": {"message": "Unauthorized",
                                                "type": "unauthorized"}}, status=401)
        peer = clean_text(request.query.get("chat") or "owner").strip()[:64] or "owner"
        ws = web.WebSocketResponse(heartbeat=30)
        await ws.prepare(request)
        self._sockets.setdefault(peer, set()).add(ws)
        try:
            await ws.send_str(json.dumps({"type": "history",
                                          "messages": await self._history()}))
            async for msg in ws:
                if msg.type != WSMsgType.TEXT:
                    continue
                await self._on_frame(ws, peer, msg.data)
        finally:
            self._sockets.get(peer, set()).discard(ws)
        return ws

    async def _on_frame(self, ws: web.WebSocketResponse, peer: str, data: str) -> None:
        text = _frame_text(data)
        if text is None:
            await ws.send_str(json.dumps({"type": "error", "error":
                                          "expected {\"type\":\"message\",\"text\":\"...\"} "
                                          f"with 1-{MAX_TEXT} characters"}))
            return
        if self._sink is None:
            return
        await self._sink(InboundMessage(
            channel=self.channel, account_id=self.account_id, chat_type="direct", chat_id=peer,
            sender_id=peer, sender_name="web chat", text=text, timestamp_ms=now_ms(),
            reply_to=DeliveryContext(channel=self.channel, to=peer, account_id=self.account_id),
        ))


def _frame_text(data: str) -> str | None:
    """The text of a `{"type":"message","text":"..."}` frame, or None for anything else.

    `text` must be a JSON string (null, numbers, lists and objects are refused, D12) of
    1..MAX_TEXT characters after trimming.
    """
    try:
        frame = json.loads(data)
    except (ValueError, RecursionError):
        return None
    if not isinstance(frame, dict) or frame.get("type") != "message":
        return None
    text = frame.get("text")
    if not isinstance(text, str):
        return None
    text = text.strip()
    return text if 0 < len(text) <= MAX_TEXT else None
