"""The built-in web chat: a static page plus a WebSocket on the gateway's own server.

Whoever holds the gateway token is the web chat's user and its owner (decision D4). Inbound
messages go through the router like any platform's; replies come back through the outbound
gate to `send_text`, which pushes them to the sockets of that chat.

Frames to the page: `history` (always the first, D190), `delta`, `message` (a reply, a notice, a
cron job's or webhook's message with its `label`, a question with `buttons`), `edit`, `media`,
`ended`, `user` (a message typed in another tab of the chat: its history row, D191), and to the
sending socket only `stored` (kept, no turn) and `error`. From the page: `message` and `press`
(`adapters/webchat/frames.py`).
"""

from __future__ import annotations

import json
import logging
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from aiohttp import WSMsgType, web

from adapters.base import (
    AdapterStatus,
    ChannelAdapter,
    ChunkRef,
    InboundSink,
    MediaItem,
    SendReceipt,
)
from adapters.webchat.frames import MAX_TEXT, frame_text, identities, press_command
from adapters.webchat.history import history_row, history_rows
from adapters.webchat.kept import chunk_fields, kept_rows
from adapters.webchat.outbox import Outbox
from adapters.webchat.relay import ClusterRelay
from adapters.webchat.routes import mount_routes
from adapters.webchat.spec import WebchatConfig
from adapters.webchat.tabs import Step, StepHook, Tab
from adapters.webchat.uploads import (
    MEDIA_PREFIX,
    UploadRefused,
    as_media,
    attachment_of,
    frame_uploads,
)
from core.api.channels import (
    Attachment,
    Button,
    ChannelEnv,
    ChannelUnavailable,
    DeliveryContext,
    InboundMessage,
    request_authorized,
)
from core.api.gateway import TranscriptMessage, clean_text, now_ms

if TYPE_CHECKING:
    from adapters.webchat.env import WebchatEnv

log = logging.getLogger(__name__)
PAGE = Path(__file__).parent / "static" / "index.html"
MEDIA_LIMIT = 50 * 1024 * 1024


def media_frame(media: MediaItem) -> dict[str, Any]:
    """An item as the page shows it (the bytes are fetched by id)."""
    return {
        "id": media.id,
        "kind": media.kind,
        "name": media.name,
        "mime": media.mime,
        "size": media.size,
        "caption": media.caption,
    }


class WebchatAdapter(ChannelAdapter):
    channel = "webchat"
    text_limit = MAX_TEXT
    preview_interval = 0.0  # its own socket: every delta, no platform rate limit
    chunk_refs = True  # a chunk's delivery names a cron job or hook to label (D136)
    media_limit = MEDIA_LIMIT

    def __init__(
        self, config: WebchatConfig, account_id: str = "default", env: ChannelEnv | None = None
    ) -> None:
        if env is None or env.gateway is None:
            raise ChannelUnavailable("the web chat needs the gateway's pages (ChannelEnv.gateway)")
        self.rt: WebchatEnv = env.gateway  # D30: what the web chat reads, no more
        self.config = config
        self.account_id = account_id
        self._sink: InboundSink | None = None
        self._tabs: dict[str, set[Tab]] = {}
        self._relay = ClusterRelay(self, self.rt.bus)  # D28: turns run elsewhere
        self._outbox = Outbox(self._send_all)  # a typed message before its reply (D191)
        self._last_sent = 0
        self.send_timeout = 10.0
        """Seconds a page may take to accept a frame before its socket is aborted (D178)."""
        self.step_hook: StepHook | None = None
        """Told each step of a tab's opening, a reply's send (D190) and a typed message's store
        (D191); tests hold one."""

    @classmethod
    def for_gateway(cls, pages: WebchatEnv) -> WebchatAdapter:
        """The web chat of a gateway's pages, as the channel registry builds it (tests)."""
        return cls(pages.config.channels.webchat, "default", ChannelEnv(pages.state_dir, pages))

    def mount(self, app: web.Application) -> None:
        app.router.add_get("/", self._page)
        app.router.add_get("/ws", self._ws)
        mount_routes(app, self.rt)

    async def start(self, sink: InboundSink) -> None:
        self._sink = sink
        self._relay.start()

    async def stop(self) -> None:
        await self._relay.stop()
        for tabs in list(self._tabs.values()):
            for tab in list(tabs):
                await tab.ws.close()
        self._tabs.clear()

    def status(self) -> AdapterStatus:
        clients = sum(len(s) for s in self._tabs.values())
        return AdapterStatus(
            self.channel,
            self.account_id,
            "connected" if self._sink else "stopped",
            extra={"clients": clients},  # a number, as every count (D134)
        )

    async def send_text(
        self, target: DeliveryContext, text: str, ref: ChunkRef | None = None
    ) -> SendReceipt:
        """A message to the page; a cron job's or webhook's carries its label and is kept
        (shown when a tab opens) when none is open (D136)."""
        fields = await chunk_fields(self.rt.store, ref)
        if "label" not in fields:
            self._need_a_tab(target)
        frame = {"type": "message", "role": "assistant", "text": text}
        await self._reply(target.to or "", frame | fields)
        return SendReceipt()

    def _need_a_tab(self, target: DeliveryContext) -> None:
        if not self._tabs.get(target.to or "") and not self._relay.shared:
            raise ChannelUnavailable(f"no web chat client connected for {target.to}")

    async def send_buttons(
        self, target: DeliveryContext, text: str, buttons: tuple[Button, ...]
    ) -> SendReceipt:
        """A message with buttons (D72); a click comes back as a `press` frame (D121)."""
        if not self._tabs.get(target.to or "") and not self._relay.shared:
            raise ChannelUnavailable(f"no web chat client connected for {target.to}")
        message_id = uuid.uuid4().hex[:12]
        frame = {
            "type": "message",
            "role": "assistant",
            "text": text,
            "messageId": message_id,
            "buttons": [{"label": b.label, "command": b.command} for b in buttons],
        }
        await self._broadcast(target.to or "", frame)
        return SendReceipt(message_id=message_id)

    async def edit_text(self, target: DeliveryContext, message_id: str, text: str) -> None:
        await self._broadcast(
            target.to or "", {"type": "edit", "messageId": message_id, "text": text}
        )

    async def send_media(
        self, target: DeliveryContext, media: MediaItem, ref: ChunkRef
    ) -> SendReceipt:
        """The page shows the item (an image, an audio player, a file link) and fetches its
        bytes from `/webchat/media/<id>` with the token (D78)."""
        fields = await chunk_fields(self.rt.store, ref)
        if "label" not in fields:
            self._need_a_tab(target)
        frame = {"type": "media", "role": "assistant", "media": media_frame(media)}
        await self._reply(target.to or "", frame | fields)
        return SendReceipt(message_id=media.id)

    async def send_preview(self, target: DeliveryContext, run_id: str, text: str) -> None:
        await self._broadcast(target.to or "", {"type": "delta", "runId": run_id, "text": text})

    async def send_final(self, target: DeliveryContext, run_id: str, text: str) -> SendReceipt:
        """The reply of run `run_id`: the page puts it in that run's bubble, wherever it is."""
        if not self._tabs.get(target.to or "") and not self._relay.shared:
            raise ChannelUnavailable(f"no web chat client connected for {target.to}")
        await self._reply(
            target.to or "", {"type": "message", "role": "assistant", "runId": run_id, "text": text}
        )
        return SendReceipt()

    async def end_preview(self, target: DeliveryContext, run_id: str, status: str) -> None:
        await self._broadcast(target.to or "", {"type": "ended", "runId": run_id, "status": status})

    async def _reply(self, peer: str, payload: dict[str, Any]) -> None:
        """A reply's frame, between the steps a test may hold (D190)."""
        await self._step(peer, "sending")
        await self._broadcast(peer, payload)
        await self._step(peer, "sent")

    async def _broadcast(self, peer: str, payload: dict[str, Any]) -> None:
        """To the chat's sockets here and on the other processes, behind a message of the chat
        still being stored (D191)."""
        await self._outbox.send(peer, payload)

    async def _send_all(self, peer: str, payload: dict[str, Any], skip: Tab | None) -> None:
        await self.send_local(peer, payload, skip)
        await self._relay.publish(peer, payload)

    async def send_local(self, peer: str, payload: dict[str, Any], skip: Tab | None = None) -> None:
        """To the sockets of `peer` connected to this process but `skip` (a tab still opening
        gets it after its history, or not at all when the history shows it, D190)."""
        data = json.dumps(payload, ensure_ascii=False)
        for tab in list(self._tabs.get(peer, ())):
            if tab is not skip:
                try:
                    await tab.send(payload, data)
                except ConnectionError as exc:  # a page gone, its handler not yet ended: the
                    log.debug("web chat frame to %s failed: %s", peer, exc)  # rest still go

    async def _step(self, peer: str, step: Step) -> None:
        if self.step_hook is not None:
            await self.step_hook(peer, step)

    async def _page(self, request: web.Request) -> web.Response:
        return web.Response(body=PAGE.read_bytes(), content_type="text/html", charset="utf-8")

    async def _history(self, peer: str) -> list[dict[str, Any]]:
        """The main session's rows, and the cron and webhook replies this chat was sent
        (kept while no tab was open, D136) since the session's last reset (`/new`, D137), in time
        order."""
        key = self.rt.keys.main_session_key(self.rt.config.default_agent_id())
        entry = await self.rt.store.get_session(key)
        since = (entry.reset_at or 0) if entry is not None else 0
        kept = await kept_rows(self.rt.store, self.channel, peer, since)
        if entry is None:
            return kept
        msgs = await self.rt.store.history(entry.session_id, limit=200)
        rows = await history_rows(self.rt.store, msgs)
        return sorted(rows + kept, key=lambda r: int(r.get("ts") or 0)) if kept else rows

    async def _ws(self, request: web.Request) -> web.StreamResponse:
        if not request_authorized(request, query=True):  # a browser's socket has no header (D81)
            return web.json_response(
                {"error": {"message": "Unauthorized", "type": "unauthorized"}}, status=401
            )
        if not _same_origin(request):  # another site's page may not open the owner's chat
            return web.json_response(
                {"error": {"message": "Forbidden origin", "type": "forbidden"}}, status=403
            )
        peer = clean_text(request.query.get("chat") or "owner").strip()[:64] or "owner"
        media = self.rt.config.agents.defaults.media
        biggest = max(media.max_image_bytes, media.max_upload_bytes)
        ws = web.WebSocketResponse(heartbeat=30, max_msg_size=biggest * 3 // 2 + 1_000_000)
        await ws.prepare(request)
        tab = Tab(ws, request.transport, self.send_timeout)
        self._tabs.setdefault(peer, set()).add(tab)  # live frames from now on, held (D190)
        try:
            await self._step(peer, "registered")
            messages = await self._history(peer)
            await self._step(peer, "read")
            await tab.open(messages)
            async for msg in ws:
                if msg.type != WSMsgType.TEXT:
                    continue
                await self._on_frame(tab, peer, msg.data)
        except ConnectionError as exc:  # a page that took no frame, aborted (D178)
            log.info("web chat socket of %s ended: %s", peer, exc)
        finally:
            self._tabs.get(peer, set()).discard(tab)
        return ws

    async def _on_frame(self, tab: Tab, peer: str, data: str) -> None:
        ws = tab.ws
        command = press_command(data)
        try:
            uploads = [] if command else self._uploads(data)
        except UploadRefused as why:  # D154: the page says which file and why
            await ws.send_str(json.dumps({"type": "error", "error": str(why)}))
            return
        text = command or frame_text(data, empty_ok=bool(uploads))
        if text is None:
            await ws.send_str(
                json.dumps(
                    {
                        "type": "error",
                        "error": 'expected {"type":"message","text":"..."} '
                        f"with 1-{MAX_TEXT} characters",
                    }
                )
            )
            return
        if self._sink is None:
            return
        stored = await self.rt.store.save_media(
            [as_media(u) for u in uploads], run_id=None, session_key=None
        )
        msg = InboundMessage(
            channel=self.channel,
            account_id=self.account_id,
            chat_type="direct",
            chat_id=peer,
            sender_id=peer,
            sender_name="web chat",
            text=text,
            attachments=tuple(attachment_of(m) for m in stored),
            button=command is not None,
            timestamp_ms=self._sent_at(),
            reply_to=DeliveryContext(channel=self.channel, to=peer, account_id=self.account_id),
            identities=identities(peer, data),
        )
        if command is not None:  # a press: the page shows no row for it
            await self._sink(msg)
            return
        slot = self._outbox.hold(peer)  # the chat's frames wait behind the message (D191)
        frame: dict[str, Any] | None = None
        row: TranscriptMessage | None = None
        try:
            await self._sink(msg)
            row = await self._stored(msg)
            frame = _user_frame(msg, row)
            await self._step(peer, "stored")
        finally:
            await self._outbox.release(peer, slot, frame, skip=tab)
        reason = (row.meta or {}).get("noRun") if row is not None else None
        if reason:  # stored, but it starts no run (e.g. after /send off)
            await ws.send_str(json.dumps({"type": "stored", "text": text, "reason": str(reason)}))

    def _sent_at(self) -> int:
        """Now (ms), and later than the last message typed here: a tab tells a `user` frame from
        its history by its time and text (D191)."""
        self._last_sent = max(now_ms(), self._last_sent + 1)
        return self._last_sent

    async def _stored(self, msg: InboundMessage) -> TranscriptMessage | None:
        """The message as the main session stored it; None when the router kept nothing (a
        command it answered, a resend it dropped, D16). A voice note's row holds its transcript,
        not the text sent (D154): a message with attachments is found by its time alone."""
        key = self.rt.keys.main_session_key(self.rt.config.default_agent_id())
        entry = await self.rt.store.get_session(key)
        if entry is None:
            return None
        for m in reversed(await self.rt.store.history(entry.session_id, limit=20)):
            if m.role == "user" and m.timestamp == msg.timestamp_ms:
                if m.plain_text() == msg.text or msg.attachments:
                    return m
        return None

    def _uploads(self, data: str) -> list[Any]:
        try:
            frame = json.loads(data)
        except (ValueError, RecursionError):
            return []
        media = self.rt.config.agents.defaults.media
        return frame_uploads(
            frame, max_image=media.max_image_bytes, max_file=media.max_upload_bytes
        )

    async def fetch_attachment(self, attachment: Attachment) -> bytes | None:
        """An upload's bytes, from the media rows (D154)."""
        file_id = attachment.file_id or ""
        if not file_id.startswith(MEDIA_PREFIX):
            return None
        media_id = file_id.removeprefix(MEDIA_PREFIX)
        found = (await self.rt.store.media_by_id([media_id])).get(media_id)
        return found.data if found is not None else None


def _user_frame(msg: InboundMessage, row: TranscriptMessage | None) -> dict[str, Any] | None:
    """What the chat's other tabs show of a message typed in one (D191): its history row; a
    command the router answered (stored nowhere) as typed; nothing for a dropped resend (D16)."""
    if row is not None:
        return {"type": "user"} | history_row(row)
    if msg.text.startswith("/"):
        return {"type": "user", "role": "user", "text": msg.text, "ts": msg.timestamp_ms}
    return None


def _same_origin(request: web.Request) -> bool:
    """A browser names the page that opens a socket (`Origin`); only this gateway's own page
    may open it (D143). Clients that are not browsers send none."""
    origin = request.headers.get("Origin")
    if not origin:
        return True
    return urlsplit(origin).netloc.lower() == request.host.lower()
