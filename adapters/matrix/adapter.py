"""Matrix channel adapter on matrix-nio with end-to-end encryption (vodozemac; D77, D170).

The sync loop is the connection the supervisor keeps up (D35; with a lease, one process of a
cluster receives, D36). Replies are HTML (``org.matrix.custom.html``) with the markdown as the
plain ``body``; live previews are one message edited with ``m.replace``; typing notifications
while a run is active. Each chunk is sent with a transaction id derived from its delivery and
index, so a resend after a crash is the same event: the homeserver de-duplicates it (D16,
reconcile "nonce"). Invites are judged in :mod:`adapters.matrix.invites`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections import deque
from typing import Any

import aiohttp
from nio import (
    AsyncClient,
    DirectRoomsResponse,
    DownloadError,
    ErrorResponse,
    ProfileGetDisplayNameResponse,
    RoomSendResponse,
)
from nio.crypto.attachments import decrypt_attachment
from nio.exceptions import LocalProtocolError

from adapters.matrix.invites import MatrixInvites
from adapters.matrix.media import UPLOAD_LIMIT, upload
from adapters.matrix.normalize import CHANNEL, Me
from adapters.matrix.send import (
    TEXT_LIMIT,
    head,
    in_thread,
    json_size,
    load_room,
    message,
    room_id,
    send_error,
    track_members,
    txn_id,
)
from adapters.matrix.session import LoginRefused, account_dir, open_device
from adapters.matrix.spec import MatrixConfig
from adapters.matrix.sync import SyncFailed, SyncLoop, keep_keys
from adapters.previews import EditablePreviews
from adapters.supervised import SupervisedAdapter
from core.api.channels import (
    AdapterStatus,
    Attachment,
    ChannelEnv,
    ChannelUnavailable,
    ChunkRef,
    DeliveryContext,
    InboundSink,
    MediaItem,
    SendReceipt,
    TargetNotFound,
)
from core.api.rendering import split_markdown

log = logging.getLogger(__name__)

TYPING_MS = 8_000
_OWN_KEEP = 512


class MatrixAdapter(MatrixInvites, EditablePreviews, SupervisedAdapter):
    """One Matrix account."""

    channel = CHANNEL
    text_limit = TEXT_LIMIT
    reconcile = "nonce"
    media_limit = UPLOAD_LIMIT
    chunk_refs = True

    def __init__(
        self,
        config: MatrixConfig,
        account_id: str = "default",
        env: ChannelEnv | None = None,
        *,
        poll_timeout_ms: int = 30_000,
        request_timeout: float = 60.0,
        retry_initial: float = 1.0,
        retry_max: float = 60.0,
    ) -> None:
        self.config = config
        self.account_id = account_id
        self.state_dir = env.state_dir if env is not None else None
        self.poll_timeout_ms = poll_timeout_ms
        self.request_timeout = request_timeout
        self.retry_initial = retry_initial
        self.retry_max = retry_max
        self._client: AsyncClient | None = None
        self._sink: InboundSink | None = None
        self._loop_task: asyncio.Task[None] | None = None
        self._sync: SyncLoop | None = None
        self._display_name: str | None = None
        self._direct: dict[str, str] = {}
        self._own: set[str] = set()
        self._own_order: deque[str] = deque()

    # ---- identity ---------------------------------------------------------------------------

    @property
    def bot_username(self) -> str | None:
        return self.config.user_id

    @property
    def mention_patterns(self) -> tuple[str, ...]:
        names = [self.config.user_id]
        if self._display_name:
            names += [f"{self._display_name}:", self._display_name]
        return tuple(names)

    # ---- lifecycle --------------------------------------------------------------------------

    async def stop(self) -> None:
        await self._unsupervise()
        await self._teardown()

    def status(self) -> AdapterStatus:
        extra: dict[str, str | int] = {"userId": self.config.user_id}
        if self._client is not None and self._client.device_id:
            extra["deviceId"] = self._client.device_id
        return self._status(extra)

    async def restart_connection(self, reason: str) -> None:
        if self._sup is not None:
            await self._sup.restart(reason)

    async def _teardown(self) -> None:
        await self.close()
        client, self._client = self._client, None
        self._sync = None
        if client is not None:
            await client.close()

    # The Connection the supervisor drives.

    async def prepare(self) -> None:
        """Log in (once) and publish the device's keys: what sending needs. Rooms are learnt
        from the sync, or when a send names one this process has not synced (a standby)."""
        if self._client is not None:
            return
        directory = account_dir(self.state_dir, self.account_id)
        client = await open_device(self.config, directory, self.request_timeout)
        try:
            await keep_keys(client)  # the device's keys are published before anything else
            name = await client.get_displayname()
            if isinstance(name, ProfileGetDisplayNameResponse):
                self._display_name = name.displayname
            rooms = await client.list_direct_rooms()
            if isinstance(rooms, DirectRoomsResponse):
                self._direct = {room: user for user, ids in rooms.rooms.items() for room in ids}
        except BaseException:
            await client.close()
            raise
        me = Me(self.config.user_id, self._display_name, self.account_id)
        self._sync = SyncLoop(
            client,
            directory,
            me,
            accept_invite=self._accept_invite,
            direct=self._direct,
            own_events=self._own,
            edits_start_turn=self.config.edits_start_turn,
            on_direct=self._mark_direct,
        )
        self._client = client
        log.info("%s logged in as %s (device %s)", self.name, client.user_id, client.device_id)

    async def open(self) -> None:
        sync, sink = self._sync, self._sink
        assert sync is not None and sink is not None
        await sync.once(sink, 0)  # proves the connection; a first start sets the baseline
        self.last_receive_ms = sync.last_receive_ms
        self._loop_task = asyncio.create_task(
            self._run(sync, sink), name=f"matrix-{self.account_id}"
        )

    async def _run(self, sync: SyncLoop, sink: InboundSink) -> None:
        while True:
            await sync.once(sink, self.poll_timeout_ms)
            self.last_receive_ms = sync.last_receive_ms

    async def wait_closed(self) -> None:
        task = self._loop_task
        if task is None:
            await asyncio.Event().wait()
            return
        await task

    async def close(self) -> None:
        task, self._loop_task = self._loop_task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    def fatal_reason(self, exc: BaseException) -> str | None:
        if isinstance(exc, LoginRefused):
            return str(exc)
        if isinstance(exc, SyncFailed) and exc.status_code == "M_UNKNOWN_TOKEN":
            return "access token rejected by the homeserver"
        return None

    # ---- outbound ---------------------------------------------------------------------------

    def chat_of(self, to: str) -> str:
        """`matrix:room:!abc:server` → `!abc:server`, the room id events carry (D179)."""
        return room_id(to)

    def chunks(self, text: str) -> list[str]:
        return split_markdown(text, TEXT_LIMIT, measure=json_size)

    def _live(self, target: DeliveryContext) -> tuple[AsyncClient, str, str]:
        client, room = self._client, room_id(str(target.to or ""))
        where = f"{self.name} room {room}"
        if client is None or self.status().state in ("stopped", "failed"):
            raise ChannelUnavailable(
                f"{where}: not connected ({self.status().detail or self.status().state})"
            )
        return client, room, where

    async def send_text(
        self, target: DeliveryContext, text: str, ref: ChunkRef | None = None
    ) -> SendReceipt:
        content = in_thread(message(text), target.thread_id)
        return await self._send(target, content, txn_id(ref, room_id(str(target.to or "")), text))

    async def send_media(
        self, target: DeliveryContext, media: MediaItem, ref: ChunkRef
    ) -> SendReceipt:
        """The file uploaded (encrypted in an encrypted room), then a message naming it with
        the chunk's transaction id: a resend after a crash is the same event (D158)."""
        client, room, where = self._live(target)
        try:
            await load_room(client, room)
            content = await upload(client, room, media, where)
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise ChannelUnavailable(f"{where}: {type(exc).__name__}: {exc}") from exc
        txn = txn_id(ref, room, f"media:{media.id or media.name}")
        return await self._send(target, in_thread(content, target.thread_id), txn)

    async def _send(
        self, target: DeliveryContext, content: dict[str, Any], txn: str | None
    ) -> SendReceipt:
        client, room, where = self._live(target)
        try:
            await load_room(client, room)
            await track_members(client, room)
            resp = await client.room_send(
                room,
                "m.room.message",
                content,
                tx_id=txn or str(uuid.uuid4()),
                ignore_unverified_devices=True,
            )
        except LocalProtocolError as exc:  # a room this account is not in
            raise TargetNotFound(f"{where}: {exc}") from exc
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise ChannelUnavailable(f"{where}: {type(exc).__name__}: {exc}") from exc
        if not isinstance(resp, RoomSendResponse):
            raise send_error(resp, where)
        self._remember(resp.event_id)
        return SendReceipt(message_id=resp.event_id)

    def _remember(self, event_id: str) -> None:
        self._own.add(event_id)
        self._own_order.append(event_id)
        while len(self._own_order) > _OWN_KEEP:
            self._own.discard(self._own_order.popleft())

    async def _post_preview(self, target: DeliveryContext, text: str) -> str:
        receipt = await self.send_text(target, head(text))
        return str(receipt.message_id)

    async def _edit(
        self, target: DeliveryContext, message_id: str, text: str, *, final: bool
    ) -> None:
        text = text if final else head(text)  # a final chunk already fits
        content = {
            "msgtype": "m.text",
            "body": f"* {text}",
            "m.new_content": message(text),
            "m.relates_to": {"rel_type": "m.replace", "event_id": message_id},
        }
        await self._send(target, content, None)

    async def send_typing(self, target: DeliveryContext) -> None:
        client, room, where = self._live(target)
        try:
            resp = await client.room_typing(room, typing_state=True, timeout=TYPING_MS)
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise ChannelUnavailable(f"{where}: {exc}") from exc
        if isinstance(resp, ErrorResponse):
            raise send_error(resp, where)

    async def fetch_attachment(self, attachment: Attachment) -> bytes | None:
        client = self._client
        if client is None or not attachment.file_id:
            return None
        handle = json.loads(attachment.file_id)
        resp = await client.download(mxc=str(handle["url"]))
        if isinstance(resp, DownloadError):
            raise send_error(resp, f"{self.name} file {attachment.name}")
        body = resp.body if isinstance(resp.body, bytes) else bytes(resp.body)
        if handle.get("key"):
            return bytes(decrypt_attachment(body, handle["key"], handle["sha256"], handle["iv"]))
        return body
