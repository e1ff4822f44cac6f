"""Slack messages out: text chunks with delivery metadata, files, buttons, reactions, edits
and live previews, and finding a chunk again after a crash (D16)."""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.base import AdapterState, ChunkRef, MediaItem, SendReceipt
from adapters.previews import EditablePreviews
from adapters.slack.controls import button_blocks
from adapters.slack.normalize import (
    NETWORK_ERRORS,
    channel_of_target,
    chat_of_target,
    map_api_error,
)
from adapters.slack.render import TEXT_LIMIT as CHUNK_LIMIT
from adapters.slack.render import render_chunks
from adapters.slack.spec import SlackAccountConfig
from core.api.channels import Attachment, Button, ChannelUnavailable, DeliveryContext

log = logging.getLogger("adapters.slack.adapter")  # the adapter's logger, as before the split

_SEEN = "👀"
_EMOJI = {"👀": "eyes", "✅": "white_check_mark", "❌": "x"}


class SlackSending(EditablePreviews):
    """Outbound half of :class:`adapters.slack.adapter.SlackAdapter` (a mixin: its state is
    set in the adapter's ``__init__``)."""

    config: SlackAccountConfig
    _client: AsyncWebClient | None
    _timeout: float

    if TYPE_CHECKING:

        @property
        def name(self) -> str: ...

        @property
        def _state(self) -> AdapterState: ...

    def chunks(self, text: str) -> list[str]:
        return render_chunks(text, CHUNK_LIMIT)  # mrkdwn already: send_text sends as is

    async def fetch_attachment(self, attachment: Attachment) -> bytes | None:
        """A shared file's bytes from its ``url_private``, with the bot token.

        The token goes only to Slack's file host (or the configured API host, for a fake):
        never to a URL merely because an event named it.
        """
        url, client = attachment.file_id or "", self._client
        allowed = {"files.slack.com"}
        if self.config.api_base_url:
            allowed.add(urlsplit(self.config.api_base_url).netloc)
        if (
            client is None
            or not client.token
            or urlsplit(url).scheme not in ("https", "http")
            or urlsplit(url).netloc not in allowed
        ):
            return None
        headers = {"Authorization": f"Bearer {client.token}"}
        async with (
            aiohttp.ClientSession() as http,
            http.get(
                url, headers=headers, timeout=aiohttp.ClientTimeout(total=self._timeout)
            ) as resp,
        ):
            if resp.status != 200:
                raise ChannelUnavailable(f"{self.name}: file download failed ({resp.status})")
            return await resp.read()

    def _where(self, target: DeliveryContext) -> tuple[AsyncWebClient, str]:
        client = self._client
        if client is None or self._state not in ("connected", "retrying", "standby"):
            raise ChannelUnavailable(f"{self.name} is not connected")
        channel = channel_of_target(target.to or "")
        if not channel:
            raise ChannelUnavailable(f"{self.name}: no target chat")
        return client, channel

    async def send_text(
        self, target: DeliveryContext, text: str, *, ref: ChunkRef | None = None
    ) -> SendReceipt:
        """Send one chunk; with `ref`, its delivery id rides along as message metadata (D16)
        so that :meth:`find_chunk` can tell after a crash whether it was posted."""
        client, channel = self._where(target)
        thread_ts = str(target.thread_id) if target.thread_id is not None else None
        try:
            resp = await client.chat_postMessage(
                channel=channel,
                text=text,
                thread_ts=thread_ts,
                metadata=_metadata(ref) if ref is not None else None,
            )
        except SlackApiError as exc:
            raise map_api_error(exc, where=f"{self.name} chat.postMessage {channel}") from exc
        except NETWORK_ERRORS as exc:
            raise ChannelUnavailable(f"{self.name}: network error: {exc}") from exc
        return SendReceipt(message_id=str(resp.get("ts")) if resp.get("ts") else None)

    async def send_media(
        self, target: DeliveryContext, media: MediaItem, ref: ChunkRef
    ) -> SendReceipt:
        """An uploaded file shared in the chat with its caption (files_upload_v2, D78): Slack
        shows images inline and plays audio. An upload carries no metadata to look it up by,
        so an in-doubt item is resent once after a crash and marked (`media_reconcile`)."""
        client, channel = self._where(target)
        thread_ts = str(target.thread_id) if target.thread_id is not None else None
        try:
            resp = await client.files_upload_v2(
                content=media.data,
                filename=media.name,
                title=media.name,
                channel=channel,
                initial_comment=media.caption or None,
                thread_ts=thread_ts,
            )
        except SlackApiError as exc:
            raise map_api_error(exc, where=f"{self.name} files_upload_v2 {channel}") from exc
        except NETWORK_ERRORS as exc:
            raise ChannelUnavailable(f"{self.name}: network error: {exc}") from exc
        uploaded = resp.get("file")
        file_id = uploaded.get("id") if isinstance(uploaded, dict) else None
        return SendReceipt(message_id=str(file_id) if file_id else None)

    async def react(self, target: DeliveryContext, message_id: str, emoji: str | None) -> None:
        """D74: 👀 while the turn runs, replaced by ✅ or ❌ (Slack names its emoji)."""
        client, channel = self._where(target)
        try:
            if emoji != _SEEN:  # the end of the turn: the 👀 goes
                with contextlib.suppress(SlackApiError):
                    await client.reactions_remove(
                        channel=channel, timestamp=message_id, name=_EMOJI[_SEEN]
                    )
            if emoji:
                await client.reactions_add(
                    channel=channel, timestamp=message_id, name=_EMOJI.get(emoji, emoji)
                )
        except SlackApiError as exc:
            raise map_api_error(exc, where=f"{self.name} reactions {channel}") from exc
        except NETWORK_ERRORS as exc:
            raise ChannelUnavailable(f"{self.name}: network error: {exc}") from exc

    def dm_target(self, user_id: str) -> str:
        return f"user:{user_id}"  # a DM with the user (opened by the platform on first send)

    def chat_of(self, to: str) -> str:
        return chat_of_target(to)

    async def send_buttons(
        self, target: DeliveryContext, text: str, buttons: tuple[Button, ...]
    ) -> SendReceipt:
        """The text as Block Kit with a row of buttons (D72); `text` stays the fallback."""
        client, channel = self._where(target)
        thread_ts = str(target.thread_id) if target.thread_id is not None else None
        try:
            resp = await client.chat_postMessage(
                channel=channel, text=text, thread_ts=thread_ts, blocks=button_blocks(text, buttons)
            )
        except SlackApiError as exc:
            raise map_api_error(exc, where=f"{self.name} chat.postMessage {channel}") from exc
        except NETWORK_ERRORS as exc:
            raise ChannelUnavailable(f"{self.name}: network error: {exc}") from exc
        return SendReceipt(message_id=str(resp.get("ts")) if resp.get("ts") else None)

    async def edit_text(self, target: DeliveryContext, message_id: str, text: str) -> None:
        """A decided question: new text, its blocks (and so its buttons) gone."""
        client, channel = self._where(target)
        try:
            await client.chat_update(channel=channel, ts=message_id, text=text, blocks=[])
        except SlackApiError as exc:
            raise map_api_error(exc, where=f"{self.name} chat.update {channel}") from exc
        except NETWORK_ERRORS as exc:
            raise ChannelUnavailable(f"{self.name}: network error: {exc}") from exc

    async def _post_preview(self, target: DeliveryContext, text: str) -> str:
        receipt = await self.send_text(target, _preview(text))
        return str(receipt.message_id)

    async def _edit(
        self, target: DeliveryContext, message_id: str, text: str, *, final: bool
    ) -> None:
        client, channel = self._where(target)
        try:
            await client.chat_update(
                channel=channel, ts=message_id, text=text if final else _preview(text)
            )
        except SlackApiError as exc:
            raise map_api_error(exc, where=f"{self.name} chat.update {channel}") from exc
        except NETWORK_ERRORS as exc:
            raise ChannelUnavailable(f"{self.name}: network error: {exc}") from exc

    async def find_chunk(self, target: DeliveryContext, ref: ChunkRef) -> SendReceipt | None:
        """Look for the chunk's message (its metadata) among the chat's recent messages."""
        client = self._client
        channel = channel_of_target(target.to or "")
        if client is None or not channel:
            return None
        try:
            if target.thread_id is not None:
                resp = await client.conversations_replies(
                    channel=channel, ts=str(target.thread_id), include_all_metadata=True, limit=200
                )
            else:
                resp = await client.conversations_history(
                    channel=channel, include_all_metadata=True, limit=200
                )
        except (SlackApiError, *NETWORK_ERRORS) as exc:
            log.warning("%s: looking up delivery %s failed: %s", self.name, ref.delivery_id, exc)
            return None
        want = _metadata(ref)
        for message in resp.get("messages") or []:
            meta = message.get("metadata") or {}
            if (
                meta.get("event_type") == want["event_type"]
                and meta.get("event_payload") == want["event_payload"]
            ):
                return SendReceipt(message_id=str(message.get("ts")))
        return None


def _preview(md: str) -> str:
    chunks = render_chunks(md, CHUNK_LIMIT)
    return chunks[0] if chunks else "…"


def _metadata(ref: ChunkRef) -> dict[str, Any]:
    return {
        "event_type": "crosstalk_delivery",
        "event_payload": {"delivery": str(ref.delivery_id), "chunk": ref.index},
    }
