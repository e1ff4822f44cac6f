"""How an outbound media item becomes a WhatsApp message (D78, D156).

The Cloud API sends a file in two steps: the bytes to ``/{phone-number-id}/media`` (an id), then
a message of type ``image`` (JPEG or PNG, 5 MB), ``audio`` (AAC, AMR, MP3, MP4 audio, OGG/Opus;
16 MB; a voice note is marked ``voice``), ``video`` (MP4, 3GPP; 16 MB) or ``document`` (any
file, 100 MB, shown with its name). What the narrower kinds cannot take — another image type, a
photo over 5 MB, an audio file with a caption (audio messages have none) — goes as a document,
so the largest file sent is a document's 100 MB (D150's limit for this channel).
"""

from __future__ import annotations

from typing import Any

from core.api.channels import MediaItem

MB = 1024 * 1024
DOCUMENT_LIMIT = 100 * MB
_KINDS: dict[str, tuple[frozenset[str], int]] = {
    "image": (frozenset({"image/jpeg", "image/png"}), 5 * MB),
    "audio": (
        frozenset({"audio/aac", "audio/amr", "audio/mpeg", "audio/mp4", "audio/ogg"}),
        16 * MB,
    ),
    "video": (frozenset({"video/mp4", "video/3gpp"}), 16 * MB),
}


def message_kind(item: MediaItem) -> str:
    """The message type that shows `item` best and takes it."""
    mime = item.mime.split(";", 1)[0].strip().lower()
    for kind, (mimes, limit) in _KINDS.items():
        if mime in mimes and item.size <= limit and not (kind == "audio" and item.caption):
            return kind
    return "document"


def message_object(item: MediaItem, kind: str, media_id: str) -> dict[str, Any]:
    """The ``image``/``audio``/``video``/``document`` object of the message."""
    out: dict[str, Any] = {"id": media_id}
    if kind == "audio":
        if item.voice:
            out["voice"] = True  # a voice note (play button and waveform), not a music file
        return out
    if item.caption:
        out["caption"] = item.caption
    if kind == "document":
        out["filename"] = item.name
    return out
