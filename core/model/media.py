"""Outbound media: an image, a file or a voice note that leaves with a reply (D78).

A :class:`MediaItem` is what a tool, a plugin, an MCP server or text to speech hands the gateway;
it is stored (the ``media`` rows, so a restart can still send it) and leaves through the outbound
gate as one chunk of its delivery, sent by the channel's one media method
(``ChannelAdapter.send_media``). When the platform cannot take it — too big, or no media at
all — the chunk becomes a text naming the file instead (D150), so nothing vanishes silently.

A turn collects the media its tools return in :data:`MEDIA_OUT` (a list per turn; tools that run
in tasks of their own append to the same list), and the turn stores them with its run.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any

from core.model.attachments import AttachmentKind, attachment_part, human_size, kind_of_mime
from core.model.text import clean_text


@dataclass(frozen=True, slots=True)
class MediaItem:
    """Bytes with a MIME type, a file name and an optional caption."""

    data: bytes
    mime: str
    name: str
    caption: str | None = None
    voice: bool = False
    """A voice note (Telegram's voice bubble; an audio file elsewhere), not a music file."""
    id: str | None = None
    """The stored row's id, once stored (the web chat serves the bytes by it)."""

    @property
    def size(self) -> int:
        return len(self.data)

    @property
    def kind(self) -> AttachmentKind:
        return media_kind(self.mime, self.voice)

    def stored(self, media_id: str) -> MediaItem:
        """The item as stored: its texts came from a sender (an upload, a platform's file) and
        a NUL or a lone surrogate in them is refused by PostgreSQL, so they are cleaned."""
        caption = None if self.caption is None else clean_text(self.caption)
        return replace(
            self,
            id=media_id,
            name=clean_text(self.name),
            mime=clean_text(self.mime),
            caption=caption,
        )

    def placeholder(self) -> str:
        """How a chunk of the delivery log names this item (and how history shows it)."""
        return f"[{self.kind}: {self.name}, {human_size(self.size)}]"

    def part(self) -> dict[str, Any]:
        """The transcript content part of a reply that carried this item (D3's keys + id)."""
        return attachment_part(self.kind, self.name, self.mime, self.size, mediaId=self.id or None)

    def describe(self) -> dict[str, Any]:
        """What a tool result tells the model about an item it attached (no bytes)."""
        return {"kind": self.kind, "name": self.name, "mime": self.mime, "size": self.size}


def media_kind(mime: str, voice: bool) -> AttachmentKind:
    """How a chat shows an item: a voice note, or what its MIME type says (image, audio, ...)."""
    return "voice" if voice else kind_of_mime(mime)


def too_big_text(item: MediaItem, limit: int) -> str:
    """The text sent instead of a file the platform would refuse for its size (D150)."""
    return (
        f"📎 {item.name} ({human_size(item.size)}) is too big to send here "
        f"(limit {human_size(limit)})."
    )


def unsupported_text(item: MediaItem) -> str:
    """The text sent where the channel takes no files at all (D150)."""
    return f"📎 {item.name} ({human_size(item.size)}) could not be sent: this chat takes no files."


@dataclass(slots=True)
class WithMedia:
    """What a tool handler returns to send media with the reply: `result` (a payload or a
    typed result) is what the model reads, with a line per item; `media` leave with the reply."""

    result: Any
    media: list[MediaItem]


MEDIA_OUT: ContextVar[list[MediaItem] | None] = ContextVar("crosstalk_media_out", default=None)
"""The media of the running turn's tools; None outside a turn (HTTP tool calls send none)."""


def collect(items: list[MediaItem]) -> bool:
    """Attach `items` to the running turn's reply; False when no turn collects them."""
    box = MEDIA_OUT.get()
    if box is None:
        return False
    box.extend(items)
    return True


__all__ = [
    "MEDIA_OUT",
    "MediaItem",
    "WithMedia",
    "collect",
    "media_kind",
    "too_big_text",
    "unsupported_text",
]
