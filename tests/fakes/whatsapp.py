"""Loopback fake of the WhatsApp Business Cloud API: the Graph endpoints a bot calls, and Meta's
signed webhook deliveries to the bot.

Graph side (``api_base`` = ``http://127.0.0.1:PORT/v23.0``): ``GET /{phone-number-id}``,
``POST /{phone-number-id}/messages`` (a text message, a media message naming an upload, or
``status: read`` with a ``typing_indicator``), ``POST /{phone-number-id}/media`` (a multipart
upload: an id), ``GET /{media-id}`` and the media download it names. Every call needs the
bearer token; errors have Graph's shape ``{"error": {"message", "type", "code", "fbtrace_id"}}``.

Webhook side: :meth:`FakeWhatsApp.deliver` queues a payload for ``webhook_url`` and posts it,
signed with ``X-Hub-Signature-256`` (HMAC-SHA256 of the raw body with the app secret), until the
bot answers 200 — as Meta retries a webhook that was not acknowledged. Sends to a user who has
not written within 24 hours are accepted and then reported ``failed`` (error 131047) by a status
webhook, as the real API does; ``window_mode = "error"`` makes it a synchronous error instead.
Statuses ``sent`` of accepted messages are delivered too, so the bot must ignore them. The Graph
side is in :mod:`tests.fakes.whatsapp_graph`.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import json
import time
from collections.abc import Callable
from typing import Any, Literal

import aiohttp
from aiohttp import web

from tests.fakes.base import Call, EmulatorServer
from tests.fakes.whatsapp_graph import WhatsAppGraph

VERSION = "v23.0"


def sign(raw: bytes, app_secret: str) -> str:
    """Meta's ``X-Hub-Signature-256``: ``sha256=`` + hex HMAC-SHA256 of the body bytes."""
    return "sha256=" + hmac.new(app_secret.encode(), raw, hashlib.sha256).hexdigest()


class FakeWhatsApp(WhatsAppGraph, EmulatorServer):
    """One business phone number on a fake Graph API, plus Meta's webhook deliveries."""

    client_max_size = 101 * 1024 * 1024  # a document's 100 MB, as the Cloud API takes

    def __init__(
        self,
        *,
        token: str = "EAAfake-access-token",
        app_secret: str = "fake-app-secret",
        verify_token: str = "fake-verify-token",
        phone_number_id: str = "106540352242922",
        display_number: str = "15550001111",
        waba_id: str = "102290129340398",
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.token, self.app_secret, self.verify_token = token, app_secret, verify_token
        self.phone_number_id, self.display_number, self.waba_id = (
            phone_number_id,
            display_number,
            waba_id,
        )
        self.clock = clock
        self.phone_numbers = {phone_number_id}  # more numbers may be added (other accounts)
        self.webhook_url: str | None = None
        self.window_mode: Literal["status", "error"] = "status"
        self.send_statuses = True
        self.retry_delay = 0.05
        self.sent: list[dict[str, Any]] = []  # messages accepted and shown to the user
        #: media messages shown to the user: to, kind, data, caption, filename, voice, id (D78)
        self.sent_media: list[dict[str, Any]] = []
        self.media: dict[str, tuple[str, bytes]] = {}
        self.upload_names: dict[str, str] = {}  # media id → the uploaded file's name
        self.last_inbound: dict[str, float] = {}
        self.outbox: list[dict[str, Any]] = []  # webhook payloads not yet acknowledged
        self.posts: list[tuple[int | None, dict[str, Any]]] = []  # every delivery attempt
        self._ids = itertools.count(1)
        self._session: aiohttp.ClientSession | None = None
        self._wake = asyncio.Event()
        self._poster: asyncio.Task[None] | None = None
        super().__init__()

    @property
    def api_base(self) -> str:
        return f"{self.base_url}/{VERSION}"

    def _setup_routes(self, app: web.Application) -> None:
        app.router.add_get(f"/{VERSION}/{{node}}", self._get_node)
        app.router.add_post(f"/{VERSION}/{{node}}/messages", self._messages)
        app.router.add_post(f"/{VERSION}/{{node}}/media", self._upload)
        app.router.add_get("/media/{media_id}", self._download)

    async def start(self) -> str:
        url = await super().start()
        self._session = aiohttp.ClientSession()
        self._poster = asyncio.create_task(self._post_loop())
        return url

    async def _on_stop(self) -> None:
        if self._poster is not None:
            self._poster.cancel()
            await asyncio.gather(self._poster, return_exceptions=True)
        if self._session is not None:
            await self._session.close()

    def config(self, **over: Any) -> dict[str, Any]:
        """The ``channels.whatsapp`` section that points a gateway at this fake."""
        return {
            "phoneNumberId": self.phone_number_id,
            "accessToken": self.token,
            "appSecret": self.app_secret,
            "verifyToken": self.verify_token,
            "apiBaseUrl": self.api_base,
            **over,
        }

    def wamid(self) -> str:
        return f"wamid.FAKE{next(self._ids):08d}"

    # -- what people send -------------------------------------------------------------------

    def message(
        self,
        wa_id: str,
        text: str | None = None,
        *,
        kind: str = "text",
        media: dict[str, Any] | None = None,
        timestamp: float | None = None,
        wamid: str | None = None,
    ) -> dict[str, Any]:
        """One inbound ``messages[]`` entry (text, or a media kind with its object)."""
        msg: dict[str, Any] = {
            "from": wa_id,
            "id": wamid or self.wamid(),
            "timestamp": str(int(timestamp if timestamp is not None else self.clock())),
            "type": kind,
        }
        if kind == "text":
            msg["text"] = {"body": text or ""}
        else:
            msg[kind] = {**(media or {}), **({"caption": text} if text else {})}
        return msg

    def add_media(self, data: bytes, mime: str) -> str:
        media_id = f"{next(self._ids) + 900000000000000}"
        self.media[media_id] = (mime, data)
        return media_id

    def payload(
        self,
        *,
        messages: list[dict[str, Any]] | None = None,
        statuses: list[dict[str, Any]] | None = None,
        names: dict[str, str] | None = None,
        phone_number_id: str | None = None,
    ) -> dict[str, Any]:
        """A webhook body with one ``messages`` change, as Meta sends it."""
        value: dict[str, Any] = {
            "messaging_product": "whatsapp",
            "metadata": {
                "display_phone_number": self.display_number,
                "phone_number_id": phone_number_id or self.phone_number_id,
            },
        }
        if messages:
            value["contacts"] = [
                {"profile": {"name": name}, "wa_id": wa_id} for wa_id, name in (names or {}).items()
            ]
            value["messages"] = messages
        if statuses:
            value["statuses"] = statuses
        return {
            "object": "whatsapp_business_account",
            "entry": [{"id": self.waba_id, "changes": [{"value": value, "field": "messages"}]}],
        }

    def user_message(
        self, wa_id: str, text: str, *, name: str | None = "Ann", deliver: bool = True, **kw: Any
    ) -> dict[str, Any]:
        """A person writes: the payload is queued for the webhook (unless ``deliver=False``)
        and opens the 24-hour window. Returns the payload."""
        msg = self.message(wa_id, text, **kw)
        self.last_inbound[wa_id] = max(self.last_inbound.get(wa_id, 0.0), float(msg["timestamp"]))
        payload = self.payload(messages=[msg], names={wa_id: name} if name else None)
        if deliver:
            self.deliver(payload)
        return payload

    def status(
        self,
        wamid: str,
        recipient: str,
        state: str = "sent",
        *,
        error: tuple[int, str] | None = None,
    ) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": wamid,
            "status": state,
            "recipient_id": recipient,
            "timestamp": str(int(self.clock())),
        }
        if error is not None:
            out["errors"] = [{"code": error[0], "title": error[1]}]
        return out

    # -- webhook deliveries -----------------------------------------------------------------

    def deliver(self, payload: dict[str, Any]) -> None:
        """Queue a payload; it is posted (and re-posted) until the bot answers 200."""
        self.outbox.append(payload)
        self._wake.set()

    async def post_webhook(
        self,
        payload: dict[str, Any] | bytes,
        *,
        app_secret: str | None = None,
        signature: str | None = None,
        url: str | None = None,
    ) -> tuple[int, str]:
        """One signed POST (``signature=""`` sends none); returns ``(status, body)``."""
        raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        sig = sign(raw, app_secret or self.app_secret) if signature is None else signature
        headers = {"Content-Type": "application/json"}
        if sig:
            headers["X-Hub-Signature-256"] = sig
        target = url or self.webhook_url
        assert target and self._session is not None, "webhook_url not set / fake not started"
        async with self._session.post(target, data=raw, headers=headers) as resp:
            return resp.status, await resp.text()

    async def redeliver(self, payload: dict[str, Any]) -> tuple[int, str]:
        """Meta delivers an already acknowledged payload once more (it may, D16)."""
        return await self.post_webhook(payload)

    async def wait_delivered(self, timeout: float = 5.0) -> None:
        await self.wait_until(lambda: not self.outbox, timeout)

    async def _post_loop(self) -> None:
        delay = self.retry_delay
        while True:
            if not self.outbox or not self.webhook_url:
                self._wake.clear()
                await self._wake.wait()
                continue
            payload = self.outbox[0]
            status: int | None
            try:
                status, _ = await self.post_webhook(payload)
            except (aiohttp.ClientError, OSError, TimeoutError):
                status = None
            self.posts.append((status, payload))
            self.record(Call("webhook", payload, None, self.webhook_url or "", "POST", status))
            if status == 200:
                self.outbox.pop(0)
                delay = self.retry_delay
                self._notify()
                continue
            await asyncio.sleep(delay)  # Meta retries with a growing delay
            delay = min(delay * 2, 1.0)
