"""The Cloud API webhook at ``/whatsapp/webhook`` on the gateway's own server (D77, D161).

``GET`` answers Meta's verify challenge (``hub.mode=subscribe``, ``hub.verify_token``);
``POST`` is accepted only with a valid ``X-Hub-Signature-256`` (HMAC-SHA256 of the raw body with
the app secret), else ``401`` and nothing is read further. Every account of the channel shares
the one route (a Meta app has one callback URL for all its numbers); each change is routed by
its ``metadata.phone_number_id``. The answer is ``200`` only once every message of the request
has been stored by the router (or recognised as a redelivery, D16); otherwise Meta retries the
request, which is what makes a crash between receipt and storage lose nothing.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
from typing import Any, Protocol

from aiohttp import web

from core.api.channels import (
    Attachment,
    AttachmentKind,
    DeliveryContext,
    InboundMessage,
    kind_of_mime,
)

log = logging.getLogger(__name__)

CHANNEL = "whatsapp"
_MEDIA: dict[str, tuple[AttachmentKind, str]] = {
    "image": ("image", "image.jpg"),
    "video": ("video", "video.mp4"),
    "audio": ("audio", "audio.ogg"),
    "sticker": ("image", "sticker.webp"),
    "document": ("file", "file"),
}


class Receiver(Protocol):
    """What the route needs of one account's adapter."""

    phone_number_id: str

    @property
    def started(self) -> bool: ...

    def secret_matches(self, raw: bytes, signature: str) -> bool: ...

    def verify_token_matches(self, token: str) -> bool: ...

    async def receive(self, value: dict[str, Any]) -> None: ...


def signature(raw: bytes, app_secret: str) -> str:
    """``X-Hub-Signature-256`` of a body: ``sha256=`` + hex HMAC-SHA256 with the app secret."""
    return "sha256=" + hmac.new(app_secret.encode(), raw, hashlib.sha256).hexdigest()


def signature_valid(raw: bytes, header: str, app_secret: str) -> bool:
    return (
        bool(header)
        and bool(app_secret)
        and hmac.compare_digest(signature(raw, app_secret).encode(), header.strip().encode())
    )


def _error(status: int, message: str, type_: str) -> web.Response:
    return web.json_response({"error": {"message": message, "type": type_}}, status=status)


class WebhookRoute:
    """The shared route of every WhatsApp account on one gateway app."""

    def __init__(self) -> None:
        self.receivers: list[Receiver] = []

    async def verify(self, request: web.Request) -> web.Response:
        q = request.query
        token = q.get("hub.verify_token", "")
        if q.get("hub.mode") != "subscribe" or not any(
            r.verify_token_matches(token) for r in self.receivers
        ):
            return _error(
                403, "verification failed: wrong hub.mode or hub.verify_token", "forbidden"
            )
        return web.Response(text=q.get("hub.challenge", ""))

    async def receive(self, request: web.Request) -> web.Response:
        raw = await request.read()
        header = request.headers.get("X-Hub-Signature-256", "")
        signed = [r for r in self.receivers if r.secret_matches(raw, header)]
        if not signed:
            log.warning(
                "whatsapp webhook: %s X-Hub-Signature-256; request refused",
                "missing" if not header else "invalid",
            )
            return _error(401, "invalid or missing X-Hub-Signature-256", "unauthorized")
        try:
            payload = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            return _error(400, "body is not JSON", "invalid_request_error")
        if not isinstance(payload, dict) or not isinstance(payload.get("entry", []), list):
            return _error(400, "body must be an object with an entry list", "invalid_request_error")
        for value in _message_changes(payload):
            pnid = str((value.get("metadata") or {}).get("phone_number_id") or "")
            receiver = next((r for r in signed if r.phone_number_id == pnid), None)
            if receiver is None:
                log.warning("whatsapp webhook: no configured account has phone number id %r", pnid)
                continue
            if not receiver.started:
                return _error(
                    503, "whatsapp channel not started; deliver again later", "unavailable"
                )
            try:
                await receiver.receive(value)
            except Exception:
                log.exception("whatsapp webhook: storing a message failed")
                return _error(
                    503, "could not store the message; deliver again later", "unavailable"
                )
        return web.json_response({"ok": True})


_ROUTE = web.AppKey("whatsapp_webhook", WebhookRoute)


def mount(app: web.Application, path: str, receiver: Receiver) -> None:
    """Add `receiver` to the app's WhatsApp route, creating the route on first use."""
    route = app.get(_ROUTE)
    if route is None:
        route = app[_ROUTE] = WebhookRoute()
        app.router.add_get(path, route.verify)
        app.router.add_post(path, route.receive)
    route.receivers.append(receiver)


def _message_changes(payload: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for entry in payload.get("entry") or []:
        for change in (entry.get("changes") or []) if isinstance(entry, dict) else []:
            if (
                isinstance(change, dict)
                and change.get("field") == "messages"
                and isinstance(change.get("value"), dict)
            ):
                out.append(change["value"])
    return out


# ---- one message → InboundMessage ----------------------------------------------------------


def message_text(message: dict[str, Any]) -> str:
    """The text a person wrote: the body, a media caption, or a button/list choice."""
    kind = message.get("type")
    if kind == "text":
        return str((message.get("text") or {}).get("body") or "")
    if kind in _MEDIA:
        return str((message.get(kind) or {}).get("caption") or "")
    if kind == "button":
        return str((message.get("button") or {}).get("text") or "")
    if kind == "interactive":
        inner = message.get("interactive") or {}
        reply = inner.get("button_reply") or inner.get("list_reply") or {}
        return str(reply.get("title") or "")
    if kind == "location":
        loc = message.get("location") or {}
        where = ", ".join(str(loc[k]) for k in ("name", "address") if loc.get(k))
        return f"[location: {loc.get('latitude')}, {loc.get('longitude')}" + (
            f", {where}]" if where else "]"
        )
    return ""


def attachment_of(message: dict[str, Any]) -> Attachment | None:
    kind = str(message.get("type") or "")
    media = message.get(kind)
    if kind not in _MEDIA or not isinstance(media, dict) or not media.get("id"):
        return None
    att_kind, name = _MEDIA[kind]
    mime = media.get("mime_type")
    if kind == "audio" and media.get("voice"):
        att_kind, name = "voice", "voice.ogg"
    elif kind == "document":
        att_kind = kind_of_mime(mime)
        name = str(media.get("filename") or name)
    return Attachment(kind=att_kind, name=name, mime=mime, file_id=str(media["id"]))


def to_inbound(
    message: dict[str, Any], *, account_id: str, names: dict[str, str]
) -> InboundMessage | None:
    """A user's message as the router wants it; ``None`` for what is no conversation input
    (reactions, system notices, unsupported kinds, messages without an id or sender)."""
    wamid, sender = message.get("id"), message.get("from")
    if not wamid or not sender or message.get("type") in ("reaction", "system", "unsupported"):
        return None
    text = message_text(message)
    attachment = attachment_of(message)
    if not text and attachment is None:
        return None
    wa_id = str(sender)
    try:
        timestamp_ms: int | None = int(message.get("timestamp") or 0) * 1000 or None
    except (TypeError, ValueError):
        timestamp_ms = None
    return InboundMessage(
        channel=CHANNEL,
        account_id=account_id,
        chat_type="direct",
        chat_id=wa_id,
        sender_id=wa_id,
        sender_name=names.get(wa_id),
        text=text,
        attachments=(attachment,) if attachment else (),
        message_id=str(wamid),
        timestamp_ms=timestamp_ms,
        identities=(f"msg:{wamid}",),
        reply_to=DeliveryContext(channel=CHANNEL, to=wa_id, account_id=account_id),
    )


def contact_names(value: dict[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for contact in value.get("contacts") or []:
        if isinstance(contact, dict) and contact.get("wa_id"):
            name = (contact.get("profile") or {}).get("name")
            if name:
                out[str(contact["wa_id"])] = str(name)
    return out
