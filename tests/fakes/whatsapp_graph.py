"""The Graph API half of the WhatsApp fake: the bearer token, injected failures, the phone
number and media nodes, uploads, and sends (text or a media message naming an upload) with
the 24-hour window applied as the Cloud API does."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from aiohttp import web

from tests.fakes.base import Call, Failure, json_response

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


class WhatsAppGraph:
    """Mixed into FakeWhatsApp (which provides the attributes and helpers declared here)."""

    token: str
    base_url: str
    phone_numbers: set[str]
    display_number: str
    clock: Callable[[], float]
    window_mode: Literal["status", "error"]
    send_statuses: bool
    sent: list[dict[str, Any]]
    sent_media: list[dict[str, Any]]
    media: dict[str, tuple[str, bytes]]
    upload_names: dict[str, str]
    last_inbound: dict[str, float]

    if TYPE_CHECKING:  # provided by FakeWhatsApp and EmulatorServer

        def record(self, call: Call) -> Call: ...
        def _notify(self) -> None: ...
        async def _hold(self, method: str) -> None: ...
        def _take_failure(self, method: str) -> Failure | None: ...
        def add_media(self, data: bytes, mime: str) -> str: ...
        def wamid(self) -> str: ...
        def deliver(self, payload: dict[str, Any]) -> None: ...
        def payload(
            self,
            *,
            messages: list[dict[str, Any]] | None = None,
            statuses: list[dict[str, Any]] | None = None,
            names: dict[str, str] | None = None,
            phone_number_id: str | None = None,
        ) -> dict[str, Any]: ...
        def status(
            self,
            wamid: str,
            recipient: str,
            state: str = "sent",
            *,
            error: tuple[int, str] | None = None,
        ) -> dict[str, Any]: ...

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
