"""Inbound attachments: what a user sent besides text, as every adapter reports it.

An attachment is stored with the user's message as a content part (decision D3:
``{type:"attachment", kind, name, mime, size}``, plus the platform's file id, kept for fetching
and left out of ``sessions_history``). A turn sees an image as an image part when the model
accepts images and the file is within the size limit; otherwise, and for every other kind, it
sees a placeholder such as ``[image: photo.jpg, 120 KB]``. Nothing is dropped silently. A voice
note or audio file that was transcribed (D78) carries its ``transcript`` in the part, shown in
``sessions_history``, and the model reads it with the placeholder.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

AttachmentKind = Literal["image", "voice", "audio", "video", "file"]
WIRE_KEYS = ("type", "kind", "name", "mime", "size")
OPTIONAL_WIRE_KEYS = ("transcript",)


class Attachment(BaseModel):
    model_config = ConfigDict(frozen=True)

    kind: AttachmentKind
    name: str
    mime: str | None = None
    size: int | None = None
    file_id: str | None = None
    """The platform's handle for fetching the bytes (Telegram file_id, a URL, a Slack file id)."""
    transcript: str | None = None
    """What a voice note or audio file says (D78), when speech to text heard it."""

    def part(self) -> dict[str, Any]:
        """The transcript content part (with the file id, which the wire format leaves out)."""
        return attachment_part(
            self.kind,
            self.name,
            self.mime,
            self.size,
            fileId=self.file_id or None,
            transcript=self.transcript,
        )

    @classmethod
    def from_part(cls, part: dict[str, Any]) -> Attachment:
        return cls(
            kind=part.get("kind", "file"),
            name=str(part.get("name") or "file"),
            mime=part.get("mime"),
            size=part.get("size"),
            file_id=part.get("fileId"),
            transcript=part.get("transcript"),
        )

    def placeholder(self, text: str = "") -> str:
        """``[voice: voice.ogg, 3 KB]``; a transcript follows it, unless it is `text` (the
        message's own text, which a voice note without words of its own becomes, D78)."""
        size = f", {human_size(self.size)}" if self.size is not None else ""
        if self.transcript is None:
            return f"[{self.kind}: {self.name}{size}]"
        if not self.transcript.strip():
            return f"[{self.kind}: {self.name}{size}, no words heard]"
        if self.transcript.strip() == text.strip():
            return f"[{self.kind}: {self.name}{size}, transcribed above]"
        return f'[{self.kind}: {self.name}{size}, transcript: "{self.transcript}"]'


def kind_of_mime(mime: str | None, default: AttachmentKind = "file") -> AttachmentKind:
    top = (mime or "").split("/", 1)[0].lower()
    if top == "image":
        return "image"
    if top == "video":
        return "video"
    if top == "audio":
        return "audio"
    return default


def human_size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{round(size / 1024)} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def attachment_part(
    kind: AttachmentKind, name: str, mime: str | None, size: int | None, **extra: Any
) -> dict[str, Any]:
    """D3's attachment content part, in and out alike; an `extra` key only when it is set."""
    out: dict[str, Any] = {"type": "attachment", "kind": kind, "name": name}
    out.update(mime=mime, size=size)
    out.update({k: v for k, v in extra.items() if v is not None})
    return out


def wire_part(part: dict[str, Any]) -> dict[str, Any]:
    """A stored content part as sessions_history shows it (attachments: D3's keys only)."""
    if part.get("type") != "attachment":
        return part
    out = {k: part.get(k) for k in WIRE_KEYS}
    out.update({k: part[k] for k in OPTIONAL_WIRE_KEYS if part.get(k) is not None})
    return out


def attachments_of(content: list[dict[str, Any]]) -> list[Attachment]:
    return [Attachment.from_part(p) for p in content if p.get("type") == "attachment"]


def text_with_placeholders(content: list[dict[str, Any]]) -> str:
    """The user's text plus a placeholder line per attachment (how history reaches a model)."""
    text = "".join(b.get("text", "") for b in content if b.get("type") == "text")
    marks = [a.placeholder(text) for a in attachments_of(content)]
    return "\n".join(x for x in [text, *marks] if x)
