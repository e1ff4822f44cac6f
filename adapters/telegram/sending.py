"""Telegram messages out: text with entities (plain text when the format is refused), media,
keyboards, reactions, typing, and previews edited in place."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, TypeAlias

from telegram import MessageEntity, ReactionTypeEmoji
from telegram.constants import ChatAction
from telegram.error import BadRequest, TelegramError
from telegram.ext import Application

from adapters.base import AdapterState, ChunkRef, MediaItem, SendReceipt
from adapters.previews import EditablePreviews
from adapters.telegram import media as tg_media
from adapters.telegram.controls import keyboard
from adapters.telegram.errors import delivery_error
from adapters.telegram.render import TelegramText, preview, render_chunks
from core.api.channels import Attachment, Button, ChannelUnavailable, DeliveryContext
from core.api.rendering import split_markdown, split_text, utf16_units

log = logging.getLogger("adapters.telegram.adapter")  # the adapter's logger, as before the split

TEXT_LIMIT = 4096

_REACTIONS = {"✅": "👍", "❌": "👎"}

TgApp: TypeAlias = Application[Any, Any, Any, Any, Any, Any]


class TelegramSending(EditablePreviews):
    """Outbound half of :class:`adapters.telegram.adapter.TelegramAdapter` (a mixin: its state
    is set in the adapter's ``__init__``)."""

    _app: TgApp | None

    if TYPE_CHECKING:

        @property
        def name(self) -> str: ...

        @property
        def _state(self) -> AdapterState: ...

    def chat_of(self, to: str) -> str:
        """`tg:group:-100123`, ` -100123 ` → `-100123`, as an update's chat id (D179)."""
        return str(_chat_id(to))

    async def send_buttons(
        self, target: DeliveryContext, text: str, buttons: tuple[Button, ...]
    ) -> SendReceipt:
        """The text as plain text under an inline keyboard (D72)."""
        bot, where = self._bot(target)
        thread = target.thread_id
        try:
            sent = await bot.send_message(
                chat_id=_chat_id(str(target.to or "")),
                text=text,
                reply_markup=keyboard(buttons),
                message_thread_id=int(thread) if thread not in (None, "") else None,
            )
        except TelegramError as exc:
            raise delivery_error(exc, where) from exc
        return SendReceipt(message_id=str(sent.message_id))

    async def react(self, target: DeliveryContext, message_id: str, emoji: str | None) -> None:
        """D74: Telegram's bots may use only its fixed list: ✅/❌ become 👍/👎."""
        bot, where = self._bot(target)
        mark = _REACTIONS.get(emoji or "", emoji)
        try:
            await bot.set_message_reaction(
                chat_id=_chat_id(str(target.to or "")),
                message_id=int(message_id),
                reaction=[ReactionTypeEmoji(mark)] if mark else [],
            )
        except TelegramError as exc:
            raise delivery_error(exc, where) from exc

    async def edit_text(self, target: DeliveryContext, message_id: str, text: str) -> None:
        """A decided question: its text replaced, its keyboard gone (an edit without one)."""
        await self._edit_once(target, message_id, TelegramText(text))

    def chunks(self, text: str) -> list[str]:
        return split_markdown(text, TEXT_LIMIT, measure=utf16_units)

    def _bot(self, target: DeliveryContext) -> tuple[Any, str]:
        app = self._app
        where = f"{self.name} chat {target.to or ''}"
        if app is None or self._state in ("stopped", "failed"):
            raise ChannelUnavailable(
                f"{where}: not connected ({self.status().detail or self._state})"
            )
        return app.bot, where

    async def send_text(self, target: DeliveryContext, text: str) -> SendReceipt:
        """Send one markdown chunk as text + entities; a rejected format goes again as plain."""
        first: SendReceipt | None = None
        for part in render_chunks(text) or [TelegramText(text)]:
            try:
                receipt = await self._send(target, part)
            except _FormatRejected:
                log.warning("%s: Telegram rejected the formatting; sending plain text", self.name)
                for plain in split_text(text, TEXT_LIMIT // 2):
                    receipt = await self._send(target, TelegramText(plain))
            first = first or receipt
        assert first is not None
        return first

    async def _send(self, target: DeliveryContext, part: TelegramText) -> SendReceipt:
        bot, where = self._bot(target)
        thread = target.thread_id
        try:
            sent = await bot.send_message(
                chat_id=_chat_id(str(target.to or "")),
                text=part.text,
                entities=_entities(part),
                message_thread_id=int(thread) if thread not in (None, "") else None,
            )
        except BadRequest as exc:
            if part.entities and _is_format_error(exc):
                raise _FormatRejected() from exc
            raise delivery_error(exc, where) from exc
        except TelegramError as exc:
            raise delivery_error(exc, where) from exc
        except RuntimeError as exc:  # PTB: "This HTTPXRequest is not initialized!"
            raise ChannelUnavailable(f"{where}: not connected ({exc})") from exc
        return SendReceipt(message_id=str(sent.message_id))

    def media_limit_for(self, media: MediaItem) -> int:
        return tg_media.limit_for(media)

    async def send_media(
        self, target: DeliveryContext, media: MediaItem, ref: ChunkRef
    ) -> SendReceipt:
        """A photo, voice note, audio, video or document (D78); no idempotency key exists, so
        an in-doubt item is resent once after a crash and logged `resent_after_crash`."""
        bot, where = self._bot(target)
        thread = target.thread_id
        try:
            sent = await tg_media.post_media(
                bot,
                _chat_id(str(target.to or "")),
                int(thread) if thread not in (None, "") else None,
                media,
            )
        except TelegramError as exc:
            raise delivery_error(exc, where) from exc
        except RuntimeError as exc:
            raise ChannelUnavailable(f"{where}: not connected ({exc})") from exc
        return SendReceipt(message_id=str(sent.message_id))

    async def _post_preview(self, target: DeliveryContext, text: str) -> str:
        receipt = await self._send_or_plain(target, preview(text))
        return str(receipt.message_id)

    async def _send_or_plain(self, target: DeliveryContext, part: TelegramText) -> SendReceipt:
        try:
            return await self._send(target, part)
        except _FormatRejected:
            return await self._send(target, TelegramText(part.text))

    async def _edit(
        self, target: DeliveryContext, message_id: str, text: str, *, final: bool
    ) -> None:
        parts = (render_chunks(text) if final and text.strip() else []) or [preview(text)]
        try:
            await self._edit_once(target, message_id, parts[0])
        except _FormatRejected:  # plain text, all of it: the rest as new messages
            plain = split_text(text, TEXT_LIMIT // 2) if final else [text[: TEXT_LIMIT // 2]]
            await self._edit_once(target, message_id, TelegramText(plain[0]))
            for rest in plain[1:]:
                await self._send(target, TelegramText(rest))
            return
        for extra in parts[1:]:  # a chunk that rendered longer than the limit (padded table)
            await self._send_or_plain(target, extra)

    async def _edit_once(
        self, target: DeliveryContext, message_id: str, part: TelegramText
    ) -> None:
        bot, where = self._bot(target)
        try:
            await bot.edit_message_text(
                chat_id=_chat_id(str(target.to or "")),
                message_id=int(message_id),
                text=part.text,
                entities=_entities(part),
            )
        except BadRequest as exc:
            if "not modified" in exc.message.lower():
                return  # the preview already shows exactly this
            if part.entities and _is_format_error(exc):
                raise _FormatRejected() from exc
            raise delivery_error(exc, where) from exc
        except TelegramError as exc:
            raise delivery_error(exc, where) from exc

    async def fetch_attachment(self, attachment: Attachment) -> bytes | None:
        if not attachment.file_id or self._app is None:
            return None
        try:
            file = await self._app.bot.get_file(attachment.file_id)
            return bytes(await file.download_as_bytearray())
        except TelegramError as exc:
            raise delivery_error(exc, f"{self.name} file {attachment.name}") from exc

    async def send_typing(self, target: DeliveryContext) -> None:
        bot, where = self._bot(target)
        thread = target.thread_id
        try:
            await bot.send_chat_action(
                chat_id=_chat_id(str(target.to or "")),
                action=ChatAction.TYPING,
                message_thread_id=int(thread) if thread not in (None, "") else None,
            )
        except TelegramError as exc:
            raise delivery_error(exc, where) from exc


class _FormatRejected(Exception):
    """Telegram refused the entities (a parse error); the caller resends plain text."""


def _is_format_error(exc: BadRequest) -> bool:
    text = exc.message.lower()
    return "entit" in text or "parse" in text


def _entities(part: TelegramText) -> list[MessageEntity] | None:
    return [MessageEntity(**e) for e in part.entities] or None


_TARGET_PREFIXES = ("telegram:", "tg:", "group:", "channel:", "user:", "dm:")


def _chat_id(to: str) -> int | str:
    """Numeric ids go as ints, ``@channelusername`` stays a string.

    Targets resolved from session keys may still carry a kind prefix (``group:-100123``).
    """
    text = to.strip()
    while text.lower().startswith(_TARGET_PREFIXES):
        text = text.split(":", 1)[1].strip()
    return int(text) if text.lstrip("-").isdigit() else text
