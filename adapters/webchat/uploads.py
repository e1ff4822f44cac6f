"""Web chat uploads (D78, D154): files, images and voice recordings in a message frame.

The page sends ``{"type":"message","text":"…","clientId":"…","attachments":[{"name","mime",
"data": <base64>, "voice"?: true}]}``. Each upload is checked against ``agents.defaults.media``
(images ``maxImageBytes``, anything else ``maxUploadBytes``), its bytes stored in the media
rows and the message carries D3 attachment parts whose ``fileId`` is ``media:<id>``, so image
input and speech to text fetch them like any platform's files.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any

from core.api.channels import Attachment, MediaItem, kind_of_mime
from core.api.gateway import human_size

MAX_UPLOADS = 8
MEDIA_PREFIX = "media:"


class UploadRefused(ValueError):
    """An upload the page must be told about (too big, not base64, too many)."""


@dataclass(frozen=True, slots=True)
class Upload:
    name: str
    mime: str
    data: bytes
    voice: bool = False


def frame_uploads(frame: Any, *, max_image: int, max_file: int) -> list[Upload]:
    """The frame's uploads, checked; [] when it has none."""
    raw = frame.get("attachments") if isinstance(frame, dict) else None
    if raw is None:
        return []
    if not isinstance(raw, list) or len(raw) > MAX_UPLOADS:
        raise UploadRefused(f"attachments must be a list of at most {MAX_UPLOADS} files")
    out = []
    for item in raw:
        if not isinstance(item, dict) or not isinstance(item.get("data"), str):
            raise UploadRefused('each attachment needs "name", "mime" and base64 "data"')
        name = str(item.get("name") or "file").replace("/", "_").strip()[:200] or "file"
        mime = str(item.get("mime") or "application/octet-stream")[:127]
        try:
            data = base64.b64decode(item["data"], validate=True)
        except (binascii.Error, ValueError):
            raise UploadRefused(f"{name}: data is not base64") from None
        limit = max_image if kind_of_mime(mime) == "image" else max_file
        if len(data) > limit:
            raise UploadRefused(
                f"{name} ({human_size(len(data))}) is over the limit of {human_size(limit)}"
            )
        out.append(Upload(name, mime, data, bool(item.get("voice"))))
    return out


def as_media(upload: Upload) -> MediaItem:
    return MediaItem(data=upload.data, mime=upload.mime, name=upload.name, voice=upload.voice)


def attachment_of(item: MediaItem) -> Attachment:
    """The D3 part of a stored upload."""
    return Attachment(
        kind=item.kind,
        name=item.name,
        mime=item.mime,
        size=item.size,
        file_id=MEDIA_PREFIX + str(item.id),
    )
