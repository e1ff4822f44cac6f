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
Statuses ``sent`` of accepted messages are delivered too, so the bot must ignore them.
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

from tests.fakes.base import Call, EmulatorServer, Failure, json_response

VERSION = "v23.0"
WINDOW = 24 * 3600
#: media message types: the MIME types each takes (None: any) and its size limit
MEDIA_KINDS: dict[str, tuple[frozenset[str] | None, int]] = {
    "image": (frozenset({"image/jpeg", "image/png"}), 5 * 1024 * 1024),
    "audio": (
        frozenset({"audio/aac", "audio/amr", "audio/mpeg", "audio/mp4", "audio/ogg"}),
        16 * 1024 * 1024,
    ),
    "video": (frozenset({"video/mp4", "video/3gpp"}), 16 * 1024 * 1024),
    "document": (None, 100 * 1024 * 1024),
}
_GRAPH_CODES = {400: 100, 401: 190, 403: 10, 404: 100, 429: 130429, 500: 1, 503: 2}


def sign(raw: bytes, app_secret: str) -> str:
    """Meta's ``X-Hub-Signature-256``: ``sha256=`` + hex HMAC-SHA256 of the body bytes."""
    return "sha256=" + hmac.new(app_secret.encode(), raw, hashlib.sha256).hexdigest()


def graph_error(status: int, message: str, code: int | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "error": {
            "message": message,
            "type": "OAuthException",
            "code": code if code is not None else _GRAPH_CODES.get(status, 1),
            "fbtrace_id": "AfakeTraceId",
            **extra,
        }
    }


class FakeWhatsApp(EmulatorServer):
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

    # -- Graph API --------------------------------------------------------------------------

    def _authorized(self, request: web.Request) -> str | None:
        auth = request.headers.get("Authorization", "")
        return auth.removeprefix("Bearer ").strip() if auth.startswith("Bearer ") else None

    def _failure(self, failure: Failure) -> web.Response:
        body = graph_error(
            failure.status,
            (failure.body or {}).get("message", "injected"),
            (failure.body or {}).get("code"),
        )
        headers = dict(failure.headers)
        if failure.retry_after is not None:
            headers["Retry-After"] = str(failure.retry_after)
        return json_response(body, failure.status, headers)

    async def _answer(
        self, request: web.Request, method: str, params: dict[str, Any]
    ) -> web.Response | None:
        """Record the call; an auth problem or injected failure answers it here."""
        token = self._authorized(request)
        call = self.record(Call(method, params, token, request.path, request.method))
        if token != self.token:
            call.status = 401
            return json_response(graph_error(401, "Invalid OAuth access token.", 190), 401)
        failure = self._take_failure(method)
        if failure is not None:
            call.status = failure.status
            return self._failure(failure)
        return None

    async def _get_node(self, request: web.Request) -> web.Response:
        node = request.match_info["node"]
        method = "getPhoneNumber" if node in self.phone_numbers else "getMedia"
        refused = await self._answer(request, method, dict(request.query))
        if refused is not None:
            return refused
        if node in self.phone_numbers:
            return json_response(
                {
                    "display_phone_number": self.display_number,
                    "verified_name": "Crosstalk Test",
                    "id": node,
                }
            )
        if node in self.media:
            mime, data = self.media[node]
            return json_response(
                {
                    "messaging_product": "whatsapp",
                    "id": node,
                    "url": f"{self.base_url}/media/{node}",
                    "mime_type": mime,
                    "sha256": hashlib.sha256(data).hexdigest(),
                    "file_size": len(data),
                }
            )
        return json_response(
            graph_error(
                400, f"Unsupported get request. Object with ID '{node}' does not exist", 100
            ),
            400,
        )

    async def _download(self, request: web.Request) -> web.Response:
        media_id = request.match_info["media_id"]
        refused = await self._answer(request, "downloadMedia", {"id": media_id})
        if refused is not None:
            return refused
        if media_id not in self.media:
            return json_response(graph_error(404, "not found"), 404)
        mime, data = self.media[media_id]
        return web.Response(body=data, content_type=mime)

    async def _messages(self, request: web.Request) -> web.Response:
        body = await request.json()
        is_read = isinstance(body, dict) and body.get("status") == "read"
        refused = await self._answer(request, "markRead" if is_read else "sendMessage", body)
        if refused is not None:
            return refused
        if request.match_info["node"] not in self.phone_numbers:
            return json_response(graph_error(400, "Unsupported post request", 100), 400)
        if body.get("messaging_product") != "whatsapp":
            return json_response(
                graph_error(400, "(#100) The parameter messaging_product is required.", 100), 400
            )
        if is_read:
            return json_response({"success": True})
        answer = self._send(body)
        await self._hold("sendMedia" if body.get("type") in MEDIA_KINDS else "sendMessage")
        return answer

    async def _upload(self, request: web.Request) -> web.Response:
        """A multipart upload (``messaging_product``, ``type``, ``file``) → ``{"id"}``."""
        form = await request.post()
        upload = form.get("file")
        params = {k: v for k, v in form.items() if isinstance(v, str)}
        refused = await self._answer(request, "uploadMedia", params)
        if refused is not None:
            return refused
        if request.match_info["node"] not in self.phone_numbers:
            return json_response(graph_error(400, "Unsupported post request", 100), 400)
        if params.get("messaging_product") != "whatsapp" or not params.get("type"):
            return json_response(
                graph_error(400, "(#100) The parameter messaging_product is required.", 100), 400
            )
        if not isinstance(upload, web.FileField):
            return json_response(
                graph_error(400, "(#100) The parameter file is required.", 100), 400
            )
        data = upload.file.read()
        media_id = self.add_media(data, str(params["type"]))
        self.upload_names[media_id] = upload.filename
        return json_response({"id": media_id})

    def _media_message(self, body: dict[str, Any], to: str) -> dict[str, Any] | web.Response:
        """A media message: its object names an upload; the kind's types and limits hold."""
        kind = str(body.get("type"))
        obj = body.get(kind)
        found = self.media.get(str(obj.get("id"))) if isinstance(obj, dict) else None
        if not isinstance(obj, dict) or found is None:
            return json_response(graph_error(400, "(#100) Invalid parameter", 100), 400)
        mime, data = found
        mimes, limit = MEDIA_KINDS.get(kind, (None, 100 * 1024 * 1024))
        if (mimes is not None and mime.split(";")[0] not in mimes) or len(data) > limit:
            return json_response(
                graph_error(400, f"(#131053) Media upload error: {mime} as {kind}", 131053), 400
            )
        if kind == "audio" and "caption" in obj:
            return json_response(graph_error(400, "(#100) Invalid parameter", 100), 400)
        return {
            "to": to,
            "kind": kind,
            "data": data,
            "caption": obj.get("caption"),
            "filename": obj.get("filename"),
            "voice": bool(obj.get("voice")),
        }

    def _send(self, body: dict[str, Any]) -> web.Response:
        to = str(body.get("to") or "")
        text = (body.get("text") or {}).get("body")
        shown: dict[str, Any] | None = None
        if body.get("type") in MEDIA_KINDS and to.isdigit():
            made = self._media_message(body, to)
            if isinstance(made, web.Response):
                return made
            shown, text = made, ""
        elif body.get("type") != "text" or not isinstance(text, str) or not to.isdigit():
            return json_response(graph_error(400, "(#100) Invalid parameter", 100), 400)
        if len(text) > 4096:
            return json_response(
                graph_error(
                    400, "(#100) Param text['body'] must be at most 4096 characters long.", 100
                ),
                400,
            )
        last = self.last_inbound.get(to)
        closed = last is None or self.clock() - last >= WINDOW
        if closed and self.window_mode == "error":
            return json_response(
                graph_error(
                    400,
                    "(#131047) Re-engagement message",
                    131047,
                    error_data={
                        "messaging_product": "whatsapp",
                        "details": "Message failed to send "
                        "because more than 24 hours have "
                        "passed since the customer last "
                        "replied to this number.",
                    },
                ),
                400,
            )
        wamid = self.wamid()
        if closed:
            self.deliver(
                self.payload(
                    statuses=[
                        self.status(
                            wamid,
                            to,
                            "failed",
                            error=(
                                131047,
                                "Message failed to send because more "
                                "than 24 hours have passed since the "
                                "customer last replied to this number.",
                            ),
                        )
                    ]
                )
            )
        elif shown is not None:
            self.sent_media.append({**shown, "id": wamid})
        else:
            self.sent.append({"to": to, "text": text, "id": wamid})
            if self.send_statuses:
                self.deliver(self.payload(statuses=[self.status(wamid, to, "sent")]))
        self._notify()
        return json_response(
            {
                "messaging_product": "whatsapp",
                "contacts": [{"input": to, "wa_id": to}],
                "messages": [{"id": wamid}],
            }
        )
