"""Media out on Matrix (D78, D158): the file to the content repository, then an ``m.image``,
``m.audio``, ``m.video`` or ``m.file`` message naming it.

In an encrypted room the file is encrypted before it leaves (nio's AES-CTR attachment
encryption) and the message carries the key in ``file``; elsewhere the message's ``url`` names
the upload. The caption is the ``body`` with the file's name in ``filename`` (the spec's media
captions); without one the body is the name. A voice note is ``m.audio`` marked
``org.matrix.msc3245.voice``, which Element shows as a voice message.
"""

from __future__ import annotations

import io
from typing import Any

from nio import AsyncClient, UploadResponse

from adapters.matrix.send import send_error
from core.api.channels import MediaItem

UPLOAD_LIMIT = 50 * 1024 * 1024
"""Synapse's default `max_upload_size` (D150): a larger item is the text naming it."""


def msgtype(item: MediaItem) -> str:
    if item.kind == "image":
        return "m.image"
    if item.kind in ("voice", "audio"):
        return "m.audio"
    if item.kind == "video":
        return "m.video"
    return "m.file"


async def upload(client: AsyncClient, room: str, item: MediaItem, where: str) -> dict[str, Any]:
    """Upload `item` (encrypted when the room is) and return the message content naming it."""
    encrypted = bool(client.rooms.get(room) and client.rooms[room].encrypted)
    resp, keys = await client.upload(
        lambda *_: io.BytesIO(item.data),
        content_type="application/octet-stream" if encrypted else item.mime,
        filename=item.name,
        encrypt=encrypted,
        filesize=item.size,
    )
    if not isinstance(resp, UploadResponse):
        raise send_error(resp, f"{where} upload {item.name}")
    content: dict[str, Any] = {
        "msgtype": msgtype(item),
        "body": item.caption or item.name,
        "filename": item.name,
        "info": {"mimetype": item.mime, "size": item.size},
    }
    if keys is not None:
        content["file"] = {**keys, "url": resp.content_uri}
    else:
        content["url"] = resp.content_uri
    if item.voice:
        content["org.matrix.msc3245.voice"] = {}
    return content
