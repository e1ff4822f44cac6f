"""Files, photos and voice notes to Telegram (D78): one Bot API method per kind.

A voice note goes as ``sendVoice`` (OGG/Opus, shown as a voice bubble), an image as
``sendPhoto`` (up to 10 MB; Telegram recompresses it), audio as ``sendAudio``, video as
``sendVideo`` and anything else — a photo over 10 MB too — as ``sendDocument`` (up to 50 MB
through the Bot API, the channel's D150 limit). The caption is plain text within Telegram's
1,024 characters.
"""

from __future__ import annotations

from typing import Any

from telegram import InputFile

from core.api.channels import MediaItem

PHOTO_LIMIT = 10 * 1024 * 1024
FILE_LIMIT = 50 * 1024 * 1024
CAPTION_LIMIT = 1024
_PHOTO_MIMES = frozenset({"image/jpeg", "image/png", "image/webp", "image/gif"})


def is_photo(media: MediaItem) -> bool:
    """Sent as a photo: an image Telegram takes as one, within its 10 MB."""
    return (
        media.kind == "image" and media.mime.lower() in _PHOTO_MIMES and media.size <= PHOTO_LIMIT
    )


def limit_for(media: MediaItem) -> int:
    return FILE_LIMIT  # a photo too big for sendPhoto goes as a document


def caption_of(media: MediaItem) -> str | None:
    text = (media.caption or "").strip()
    if len(text) > CAPTION_LIMIT:
        text = text[: CAPTION_LIMIT - 1] + "…"
    return text or None


async def post_media(bot: Any, chat_id: int | str, thread: int | None, media: MediaItem) -> Any:
    """The sent `Message` (PTB raises TelegramError on refusal)."""
    upload = InputFile(media.data, filename=media.name)
    common: dict[str, Any] = {
        "chat_id": chat_id,
        "caption": caption_of(media),
        "message_thread_id": thread,
    }
    if media.voice:
        return await bot.send_voice(voice=upload, **common)
    if is_photo(media):
        return await bot.send_photo(photo=upload, **common)
    if media.kind in ("audio", "voice"):
        return await bot.send_audio(audio=upload, **common)
    if media.kind == "video":
        return await bot.send_video(video=upload, **common)
    return await bot.send_document(document=upload, **common)
