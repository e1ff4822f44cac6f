"""A channel without a platform: `POST <path>/in` is a user's message, `GET <path>/out` lists
what the bot sent. Both need the gateway token. A template for a real channel, and a test aid."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from core.api.channels import (
    AdapterStatus,
    ChannelAdapter,
    ChannelEnv,
    DeliveryContext,
    InboundMessage,
    InboundSink,
    SendReceipt,
    request_authorized,
)
from crosstalk_example.channel import LoopbackConfig


class LoopbackAdapter(ChannelAdapter):
    """Also `HttpMounted` (it has `mount`): every gateway process serves its routes."""

    channel = "loopback"
    text_limit = 2000

    def __init__(
        self, config: LoopbackConfig, account_id: str = "default", env: ChannelEnv | None = None
    ) -> None:
        self.config = config
        self.account_id = account_id
        self._sink: InboundSink | None = None
        self.sent: list[dict[str, Any]] = []

    def mount(self, app: web.Application) -> None:
        app.router.add_post(f"{self.config.path}/in", self._inbound)
        app.router.add_get(f"{self.config.path}/out", self._outbox)

    async def start(self, sink: InboundSink) -> None:
        self._sink = sink

    async def stop(self) -> None:
        self._sink = None

    def status(self) -> AdapterStatus:
        return AdapterStatus(
            self.channel, self.account_id, "connected" if self._sink else "stopped"
        )

    async def send_text(self, target: DeliveryContext, text: str) -> SendReceipt:
        self.sent.append({"to": target.to, "text": text})
        return SendReceipt(message_id=str(len(self.sent)))

    async def _inbound(self, request: web.Request) -> web.Response:
        if not request_authorized(request):
            return web.json_response({"error": "unauthorized"}, status=401)
        body = await request.json()
        if (
            not isinstance(body, dict)
            or not isinstance(body.get("from"), str)
            or not isinstance(body.get("text"), str)
        ):
            return web.json_response({"error": "body must be {from: str, text: str}"}, status=400)
        if self._sink is None:
            return web.json_response({"error": "channel not started"}, status=503)
        sender = body["from"]
        await self._sink(
            InboundMessage(
                channel=self.channel,
                account_id=self.account_id,
                chat_type="direct",
                chat_id=sender,
                sender_id=sender,
                text=body["text"],
                reply_to=DeliveryContext(
                    channel=self.channel, to=sender, account_id=self.account_id
                ),
            )
        )
        return web.json_response({"ok": True}, status=202)

    async def _outbox(self, request: web.Request) -> web.Response:
        if not request_authorized(request):
            return web.json_response({"error": "unauthorized"}, status=401)
        return web.json_response({"sent": self.sent})
