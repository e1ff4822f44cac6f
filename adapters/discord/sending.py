"""Discord messages out over REST: chunks with a nonce (D16), files, buttons, reactions,
typing and previews edited in place, each call bounded by `send_timeout` (D142)."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Awaitable
from typing import TYPE_CHECKING, TypeVar

import discord

from adapters.base import AdapterState, ChunkRef, MediaItem, SendReceipt
from adapters.discord.client import AdapterClient
from adapters.discord.controls import button_view
from adapters.discord.errors import bounded
from adapters.discord.normalize import chat_of_target, parse_to
from adapters.discord.render import TEXT_LIMIT, render_chunks
from adapters.previews import EditablePreviews
from core.api.channels import (
    Attachment,
    Button,
    ChannelUnavailable,
    DeliveryContext,
    DeliveryError,
    TargetNotFound,
)

T = TypeVar("T")


class DiscordSending(EditablePreviews):
    """Outbound half of :class:`adapters.discord.adapter.DiscordAdapter` (a mixin: its state is
    set in the adapter's ``__init__``)."""

    _client: AdapterClient | None
    send_timeout: float

    if TYPE_CHECKING:

        @property
        def name(self) -> str: ...

        @property
        def _state(self) -> AdapterState: ...

    async def react(self, target: DeliveryContext, message_id: str, emoji: str | None) -> None:
        """D74: 👀 while the turn runs, replaced by ✅ or ❌ (the bot's own 👀 is removed)."""
        dest = await self._dest(target)
        client = self._client
        partial = discord.PartialMessage(channel=dest, id=int(message_id))  # type: ignore[arg-type]
        if emoji != "👀" and client is not None and client.user is not None:
            with contextlib.suppress(ChannelUnavailable, DeliveryError):
                await self._bounded(partial.remove_reaction("👀", client.user), target)
        if emoji:
            await self._bounded(partial.add_reaction(emoji), target)

    def dm_target(self, user_id: str) -> str:
        return f"user:{user_id}"  # a DM with the user (opened by the platform on first send)

    def chat_of(self, to: str) -> str:
        return chat_of_target(to)

    async def send_buttons(
        self, target: DeliveryContext, text: str, buttons: tuple[Button, ...]
    ) -> SendReceipt:
        """The text with a row of buttons whose custom ids are their commands (D72)."""
        dest = await self._dest(target)
        sent = await self._bounded(dest.send(text, view=button_view(buttons)), target)
        return SendReceipt(message_id=str(sent.id))

    async def edit_text(self, target: DeliveryContext, message_id: str, text: str) -> None:
        """A decided question: new text, no buttons."""
        dest = await self._dest(target)
        partial = discord.PartialMessage(channel=dest, id=int(message_id))  # type: ignore[arg-type]
        await self._bounded(partial.edit(content=text, view=None), target)

    def chunks(self, text: str) -> list[str]:
        return render_chunks(text, TEXT_LIMIT)  # rendered here: send_text sends as is

    async def _dest(self, target: DeliveryContext) -> discord.abc.Messageable:
        client = self._client
        if client is None or client.is_closed() or client.user is None:
            raise ChannelUnavailable(f"{self.name} is not connected ({self._state})")
        try:
            kind, snowflake = parse_to(target.to)
            if target.thread_id not in (None, ""):
                kind, snowflake = "channel", int(str(target.thread_id))
        except ValueError as exc:
            raise TargetNotFound(f"{self.name}: {exc}") from None
        if kind == "user":
            return await self._bounded(client.create_dm(discord.Object(snowflake)), target)
        found = client.get_channel(snowflake)
        return (
            found
            if isinstance(found, discord.abc.Messageable)
            else client.get_partial_messageable(snowflake)
        )

    async def _bounded(self, call: Awaitable[T], target: DeliveryContext) -> T:
        """A REST call with `send_timeout` (D142): unanswered, it is a fault the gate retries."""
        return await bounded(call, self.send_timeout, f"{self.name} → {target.to}")

    async def send_text(
        self, target: DeliveryContext, text: str, *, ref: ChunkRef | None = None
    ) -> SendReceipt:
        """Send one chunk; with `ref`, as `nonce` + `enforce_nonce` (D16), so a resend of the
        same chunk within Discord's nonce window returns the first message instead."""
        dest = await self._dest(target)
        send = dest.send(text) if ref is None else dest.send(text, nonce=ref.nonce)
        sent = await self._bounded(send, target)
        return SendReceipt(message_id=str(sent.id))

    async def send_media(
        self, target: DeliveryContext, media: MediaItem, ref: ChunkRef
    ) -> SendReceipt:
        """An uploaded file with its caption (D78): Discord shows images inline and audio
        (voice notes too) with a player. The nonce makes a resend after a crash a no-op (D16)."""
        dest = await self._dest(target)
        upload = discord.File(io.BytesIO(media.data), filename=media.name)
        caption = (media.caption or "")[:TEXT_LIMIT] or None
        where = f"{self.name} → {target.to}"
        upload_timeout = max(self.send_timeout, 300.0)  # 10 MiB on a slow link takes a while
        sent = await bounded(
            dest.send(caption, file=upload, nonce=ref.nonce), upload_timeout, where
        )
        return SendReceipt(message_id=str(sent.id))

    async def _post_preview(self, target: DeliveryContext, text: str) -> str:
        receipt = await self.send_text(target, _preview(text))
        return str(receipt.message_id)

    async def _edit(
        self, target: DeliveryContext, message_id: str, text: str, *, final: bool
    ) -> None:
        dest = await self._dest(target)
        content = text if final else _preview(text)
        partial = discord.PartialMessage(channel=dest, id=int(message_id))  # type: ignore[arg-type]
        await self._bounded(partial.edit(content=content), target)

    async def fetch_attachment(self, attachment: Attachment) -> bytes | None:
        client = self._client
        url = attachment.file_id or ""
        if client is None or not url.startswith(("https://", "http://")):
            return None
        return await client.http.get_from_cdn(url)

    async def send_typing(self, target: DeliveryContext) -> None:
        dest = await self._dest(target)
        await self._bounded(dest.typing(), target)  # one trigger: Discord shows it for ~10 s


def _preview(md: str) -> str:
    """The first chunk of a partial reply (an unfinished fence is closed by the splitter)."""
    chunks = render_chunks(md, TEXT_LIMIT)
    return chunks[0] if chunks else "…"
