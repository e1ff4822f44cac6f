"""Matrix room events → :class:`InboundMessage`, with no I/O.

Rooms are groups; a room the bot's ``m.direct`` names is a direct chat, keyed by the person
(D77). ``m.notice`` is what bots send, so notices are ignored like other bots' messages; the
bot's own events are ignored too. A message in a thread (``m.thread``) carries the thread's
root event id; an edit (``m.replace``) is no turn unless ``editsStartTurn`` (D16).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from core.api.channels import (
    Attachment,
    AttachmentKind,
    DeliveryContext,
    InboundMessage,
    kind_of_mime,
)

CHANNEL = "matrix"
_MEDIA: dict[str, AttachmentKind] = {
    "m.image": "image",
    "m.audio": "audio",
    "m.video": "video",
    "m.file": "file",
}


@dataclass(frozen=True, slots=True)
class Me:
    """Who the bot is, for mentions and replies."""

    user_id: str
    display_name: str | None
    account_id: str


def relation(content: dict[str, Any]) -> dict[str, Any]:
    rel = content.get("m.relates_to")
    return rel if isinstance(rel, dict) else {}


def is_edit(content: dict[str, Any]) -> bool:
    return relation(content).get("rel_type") == "m.replace"


def _attachment(content: dict[str, Any]) -> Attachment | None:
    kind = _MEDIA.get(str(content.get("msgtype")))
    if kind is None:
        return None
    raw_info = content.get("info")
    info: dict[str, Any] = raw_info if isinstance(raw_info, dict) else {}
    mime = info.get("mimetype") if isinstance(info.get("mimetype"), str) else None
    size = info.get("size") if isinstance(info.get("size"), int) else None
    name = str(content.get("filename") or content.get("body") or kind)
    file = content.get("file")
    if isinstance(file, dict) and isinstance(file.get("url"), str):  # encrypted media
        handle = json.dumps(
            {
                "url": file["url"],
                "key": file.get("key", {}).get("k"),
                "iv": file.get("iv"),
                "sha256": file.get("hashes", {}).get("sha256"),
            }
        )
    elif isinstance(content.get("url"), str):
        handle = json.dumps({"url": content["url"]})
    else:
        return None
    mapped = kind_of_mime(mime, "file") if kind == "file" else kind
    if kind == "audio" and "org.matrix.msc3245.voice" in content:
        mapped = "voice"  # Element's voice message (D158): heard, and answered by voice
    return Attachment(kind=mapped, name=name, mime=mime, size=size, file_id=handle)


def mentions_me(content: dict[str, Any], me: Me) -> bool:
    mentions = content.get("m.mentions")
    if isinstance(mentions, dict) and me.user_id in (mentions.get("user_ids") or []):
        return True
    body = str(content.get("body") or "").lower()
    names = [me.user_id.lower()] + ([me.display_name.lower()] if me.display_name else [])
    formatted = str(content.get("formatted_body") or "")
    return any(n in body for n in names) or f"matrix.to/#/{me.user_id}" in formatted


def normalize(
    source: dict[str, Any],
    *,
    room_id: str,
    direct_peer: str | None,
    room_name: str | None,
    me: Me,
    own_events: set[str],
    edits_start_turn: bool,
) -> InboundMessage | None:
    """One timeline event as the router wants it; None for what Crosstalk ignores."""
    if source.get("type") != "m.room.message":
        return None
    sender = str(source.get("sender") or "")
    event_id = str(source.get("event_id") or "")
    content = source.get("content")
    if not sender or not event_id or not isinstance(content, dict) or sender == me.user_id:
        return None
    rel = relation(content)
    if rel.get("rel_type") == "m.replace":
        if not edits_start_turn:
            return None
        new = content.get("m.new_content")
        content = new if isinstance(new, dict) else content
    msgtype = content.get("msgtype")
    if msgtype == "m.notice":
        return None  # bots speak in notices (other bots, bridges); people do not
    attachment = _attachment(content)
    text = "" if attachment is not None else str(content.get("body") or "")
    if msgtype not in ("m.text", "m.emote") and attachment is None:
        return None
    if not text and attachment is None:
        return None
    thread = rel.get("event_id") if rel.get("rel_type") == "m.thread" else None
    reply = rel.get("m.in_reply_to")
    reply_id = reply.get("event_id") if isinstance(reply, dict) else None
    direct = direct_peer is not None and direct_peer == sender
    to = DeliveryContext(
        channel=CHANNEL,
        to=room_id,
        account_id=me.account_id,
        thread_id=str(thread) if thread and not direct else None,
    )
    ts = source.get("origin_server_ts")
    return InboundMessage(
        channel=CHANNEL,
        account_id=me.account_id,
        chat_type="direct" if direct else "group",
        chat_id=sender if direct else room_id,
        thread_id=None if direct or not thread else str(thread),
        sender_id=sender,
        sender_name=None,
        chat_title=None if direct else room_name,
        text=text,
        attachments=(attachment,) if attachment else (),
        message_id=event_id,
        timestamp_ms=ts if isinstance(ts, int) else None,
        mentioned=not direct and mentions_me(content, me),
        reply_to_bot=bool(reply_id and reply_id in own_events)
        or (bool(thread) and thread in own_events),
        reply_to=to,
        identities=(f"event:{event_id}",),
    )
