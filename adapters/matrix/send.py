"""Sending to Matrix: message content, transaction ids, rooms loaded on demand, errors.

Kept apart from the adapter's lifecycle (D175): what one send needs, with no state of its own.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from nio import AsyncClient, ErrorResponse, MatrixRoom

from adapters.markup import markdown_html
from adapters.matrix.normalize import CHANNEL
from core.api.channels import (
    ChannelUnavailable,
    ChunkRef,
    DeliveryError,
    RateLimited,
    TargetForbidden,
    TargetNotFound,
)
from core.api.rendering import split_markdown

TEXT_LIMIT = 10_000
"""Per chunk, counted as JSON-escaped text: an event is at most 64 KiB, and an edit carries the
text about three times (fallback, new body, HTML), encrypted (base64) on top."""


def room_id(to: str) -> str:
    """The room of a delivery target: an announce to a group session may name it by the key's
    kind (``group:!room:server``); a room id itself starts with ``!``."""
    text = to.strip()
    while text.lower().startswith(("matrix:", "group:", "channel:", "room:")):
        text = text.split(":", 1)[1].strip()
    return text


async def load_room(client: AsyncClient, room_id: str) -> None:
    """Make a room nio has not synced known to it: encrypted or not, and its members.
    (A restarted process resumes its sync where it stopped, so quiet rooms never come.)"""
    if room_id in client.rooms:
        return
    state = await client.room_get_state_event(room_id, "m.room.encryption")
    status = getattr(getattr(state, "transport_response", None), "status", None)
    if isinstance(state, ErrorResponse) and status != 404:
        raise send_error(state, f"{CHANNEL} room {room_id}")
    encrypted = not isinstance(state, ErrorResponse)
    client.rooms[room_id] = MatrixRoom(room_id, client.user_id, encrypted)
    if encrypted:
        client.encrypted_rooms.add(room_id)
    members = await client.joined_members(room_id)
    if isinstance(members, ErrorResponse):
        del client.rooms[room_id]
        raise send_error(members, f"{CHANNEL} room {room_id}")


async def track_members(client: AsyncClient, room_id: str) -> None:
    """Know every member's devices before encrypting for them: a member whose device list
    was never fetched would silently get no room key (and could not read the reply)."""
    room = client.rooms.get(room_id)
    if client.olm is None or room is None or not room.encrypted:
        return
    client.olm.update_tracked_users(room)
    if client.should_query_keys:
        await client.keys_query()


def json_size(text: str) -> int:
    return len(json.dumps(text)) - 2


def head(text: str) -> str:
    """What a preview shows of a long partial reply: its first chunk."""
    parts = split_markdown(text, TEXT_LIMIT, measure=json_size)
    return parts[0] if parts else text


def message(text: str) -> dict[str, Any]:
    """A text message: markdown as the plain body, its HTML as the formatted body."""
    return {
        "msgtype": "m.text",
        "body": text,
        "format": "org.matrix.custom.html",
        "formatted_body": markdown_html(text),
    }


def in_thread(content: dict[str, Any], thread_id: object) -> dict[str, Any]:
    """The content as a message in thread `thread_id` (with the reply fallback), if any."""
    if thread_id not in (None, ""):
        thread = str(thread_id)
        content["m.relates_to"] = {
            "rel_type": "m.thread",
            "event_id": thread,
            "is_falling_back": True,
            "m.in_reply_to": {"event_id": thread},
        }
    return content


def txn_id(ref: ChunkRef | None, room: str, text: str) -> str | None:
    """The chunk's transaction id: the same chunk resent is the same id (the homeserver
    answers with the event it already has); the digest keeps two databases' delivery ids
    from ever meaning the same transaction."""
    if ref is None:
        return None
    digest = hashlib.sha256(f"{room}\n{text}".encode()).hexdigest()[:16]
    return f"ct{ref.delivery_id}.{ref.index}.{digest}"


def send_error(resp: Any, where: str) -> DeliveryError:
    """A Matrix error response → the gate's typed delivery errors."""
    transport = getattr(resp, "transport_response", None)
    status = getattr(transport, "status", None)
    code = getattr(resp, "status_code", None)
    text = f"{where}: {code or status}: {getattr(resp, 'message', '')}".rstrip(": ")
    if code == "M_LIMIT_EXCEEDED" or status == 429:
        wait = getattr(resp, "retry_after_ms", None) or 1000
        return RateLimited(text, wait / 1000)
    if isinstance(status, int) and status >= 500:
        # the transaction id makes the retry safe: a send that did land is not repeated
        return RateLimited(f"{text} (server error, retrying)", 1.0)
    if code == "M_FORBIDDEN" or status == 403:
        return TargetForbidden(text)
    if code == "M_NOT_FOUND" or status == 404:
        return TargetNotFound(text)
    if code == "M_UNKNOWN_TOKEN" or status == 401:
        return ChannelUnavailable(text)
    return DeliveryError(text)
