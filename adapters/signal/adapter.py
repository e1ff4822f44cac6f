"""One Signal account in a signal-cli daemon as a channel account (D77, D163, D164).

The receiving side is the daemon's event stream, kept up by the connection supervisor (D35):
capped backoff, ``Last-Event-ID`` on every reconnect so nothing sent meanwhile is lost, the
watchdog's reconnect when even the keep-alives stop, and — in a cluster — the stream only in the
process that holds the connection's lease (D36). Sending, typing, read receipts and attachment
downloads are JSON-RPC calls, available in every process.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import re
import time

import aiohttp

from adapters.signal.events import Cursor, read_events
from adapters.signal.normalize import CHANNEL, to_inbound
from adapters.signal.rpc import SignalRpc, data_uri, target_params
from adapters.signal.spec import SignalAccountConfig
from adapters.styled import styled_text
from adapters.supervised import SupervisedAdapter
from core.api.channels import (
    AdapterStatus,
    Attachment,
    ChannelEnv,
    ChannelUnavailable,
    ChunkRef,
    DeliveryContext,
    DeliveryError,
    InboundMessage,
    InboundSink,
    MediaItem,
    SendReceipt,
)
from core.api.rendering import split_markdown, utf16_units

log = logging.getLogger(__name__)

TEXT_LIMIT = 2000  # Signal sends longer texts as an attachment; keep each chunk a message
_PENDING_RECEIPTS = 64  # per chat: read receipts still owed, oldest dropped
REPLAY_SLACK_MS = 60_000  # clocks differ: a replay without a cursor keeps the last minute too


class _Rejected(Exception):
    """The daemon does not know the account: configuration, not worth retrying."""


class SignalAdapter(SupervisedAdapter):
    channel = CHANNEL
    text_limit = TEXT_LIMIT
    reconcile = "resend"  # signal-cli cannot be asked what was sent, nor dedupe a resend
    media_limit = 100 * 1024 * 1024  # Signal's attachment limit (D150, D157)

    def __init__(
        self,
        config: SignalAccountConfig,
        account_id: str = "default",
        env: ChannelEnv | None = None,
        *,
        retry_initial: float = 1.0,
        retry_max: float = 60.0,
        connect_timeout: float = 15.0,
    ) -> None:
        self.config = config
        self.account_id = account_id
        self.account = (config.account or "").strip()
        self.retry_initial, self.retry_max = retry_initial, retry_max
        self.connect_timeout = connect_timeout
        state_dir = env.state_dir if env is not None else None
        safe = re.sub(r"[^0-9A-Za-z+_-]", "_", self.account) or account_id
        self.cursor = Cursor(state_dir / f"signal-{safe}.cursor" if state_dir else None)
        self._sink: InboundSink | None = None
        self._rpc: SignalRpc | None = None
        self._stream: aiohttp.ClientSession | None = None
        self._resp: aiohttp.ClientResponse | None = None
        self._reader: asyncio.Task[None] | None = None
        self._names: set[str] = set()
        self._owed: dict[str, dict[str, list[int]]] = {}  # to → sender → message timestamps
        self._floor_ms: int | None = None
        self.opens = 0

    # ---- identity and state -------------------------------------------------------------------

    @property
    def mention_patterns(self) -> tuple[str, ...]:
        return tuple(f"@{n}" for n in sorted({self.account, *self._names}) if n)

    @property
    def bot_username(self) -> str | None:
        return self.account or None

    def status(self) -> AdapterStatus:
        return self._status({"account": self.account})

    # ---- lifecycle ----------------------------------------------------------------------------

    async def start(self, sink: InboundSink) -> None:
        if self._sup is not None:
            return
        if not self.account:
            self._failed = "no account configured"
            raise ChannelUnavailable(f"{self.name}: no account configured")
        self._failed = None
        self._sink = sink
        self._rpc = SignalRpc(self.config.http_url, self.account)
        await self._supervise()

    async def stop(self) -> None:
        await self._unsupervise()
        await self.close()
        self._sink = None
        rpc, self._rpc = self._rpc, None
        if rpc is not None:
            await rpc.close()

    async def restart_connection(self, reason: str) -> None:
        """Watchdog (D16): the stream is open but not even keep-alives arrive."""
        if self._sup is not None:
            await self._sup.restart(reason)

    # The Connection the supervisor drives (core.engine.channels.supervisor).

    async def prepare(self) -> None:
        assert self._rpc is not None
        await self._rpc.check()

    async def open(self) -> None:
        """Open the event stream, resuming after the last stored event."""
        await self.close()
        headers = {"Accept": "text/event-stream"}
        self._floor_ms = None
        if self.cursor.value:
            headers["Last-Event-ID"] = self.cursor.value
        elif self.cursor.since_ms is not None:
            # a reconnect before any event had an id: ask for everything the daemon kept (an
            # id it does not know), but take only what arrived since we first listened (D164)
            headers["Last-Event-ID"] = "0"
            self._floor_ms = self.cursor.since_ms - REPLAY_SLACK_MS
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=self.connect_timeout)
        session = self._stream = aiohttp.ClientSession(timeout=timeout, read_bufsize=2**20)
        url = f"{self.config.http_url}/api/v1/events"
        try:
            resp = await session.get(url, params={"account": self.account}, headers=headers)
            if resp.status == 400:
                resp.release()
                raise _Rejected(
                    f"signal-cli at {self.config.http_url} has no account {self.account}"
                )
            if resp.status != 200:
                resp.release()
                raise ConnectionError(f"event stream answered HTTP {resp.status}")
        except BaseException:
            await self.close()  # the session too: the supervisor retries with a new one
            raise
        self._resp = resp
        self.last_receive_ms = int(time.time() * 1000)
        self.cursor.started(self.last_receive_ms)
        self._reader = asyncio.create_task(self._read(resp), name=f"{self.name}-events")
        self.opens += 1

    async def wait_closed(self) -> None:
        reader = self._reader
        if reader is None:
            await asyncio.Event().wait()
            return
        await reader
        raise ConnectionError("event stream ended")

    async def close(self) -> None:
        reader, self._reader = self._reader, None
        if reader is not None and not reader.done():
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)
        resp, self._resp = self._resp, None
        if resp is not None:
            resp.close()
        stream, self._stream = self._stream, None
        if stream is not None:
            await stream.close()

    def fatal_reason(self, exc: BaseException) -> str | None:
        return str(exc) if isinstance(exc, _Rejected) else None

    # ---- inbound ------------------------------------------------------------------------------

    def _traffic(self) -> None:
        self.last_receive_ms = int(time.time() * 1000)

    async def _read(self, resp: aiohttp.ClientResponse) -> None:
        """Hand each event's message to the router, in order; the cursor follows storage, so
        a failure here ends the stream and the reconnect replays from the last stored event."""
        async for event in read_events(resp, self._traffic):
            if event.event == "receive":
                await self._receive(event.data)
            self.cursor.advance(event.id)
            if event.id:
                self._floor_ms = None

    async def _receive(self, data: str) -> None:
        try:
            body = json.loads(data)
        except ValueError:
            log.warning("%s: an event that is not JSON was skipped", self.name)
            return
        envelope = body.get("envelope") if isinstance(body, dict) else None
        if not isinstance(envelope, dict) or (body.get("account") not in (None, self.account)):
            return
        received = envelope.get("serverReceivedTimestamp") or envelope.get("timestamp") or 0
        if self._floor_ms is not None and int(received) < self._floor_ms:
            return  # from before this start, replayed because no cursor was known
        msg = to_inbound(
            envelope,
            account_id=self.account_id,
            bot=self.account,
            edits=self.config.edits_start_turn,
        )
        if msg is None or self._sink is None:
            return
        if msg.mentioned:  # the names people see for the bot, for mention_patterns
            mentions = (envelope.get("dataMessage") or {}).get("mentions") or []
            self._names.update(
                str(m["name"])
                for m in mentions
                if isinstance(m, dict) and m.get("number") == self.account and m.get("name")
            )
        self._owe_receipt(msg)
        await self._sink(msg)

    def _owe_receipt(self, msg: InboundMessage) -> None:
        if msg.timestamp_ms is None or msg.reply_to.to is None:
            return
        owed = self._owed.setdefault(msg.reply_to.to, {}).setdefault(msg.sender_id, [])
        owed.append(msg.timestamp_ms)
        del owed[:-_PENDING_RECEIPTS]

    async def fetch_attachment(self, attachment: Attachment) -> bytes | None:
        if not attachment.file_id or self._rpc is None:
            return None
        data = await self._rpc.attachment(attachment.file_id, f"{self.name} attachment")
        try:
            return base64.b64decode(data, validate=True)
        except ValueError as exc:
            raise DeliveryError(f"{self.name}: attachment data is not base64") from exc

    # ---- outbound -----------------------------------------------------------------------------

    def chunks(self, text: str) -> list[str]:
        return split_markdown(text, TEXT_LIMIT, measure=utf16_units)

    def _client(self, target: DeliveryContext) -> tuple[SignalRpc, str]:
        rpc = self._rpc
        if rpc is None or self.status().state in ("stopped", "failed"):
            raise ChannelUnavailable(
                f"{self.name} is not connected ({self.status().detail or self.status().state})"
            )
        to = (target.to or "").strip()
        if not to or not any(target_params(to).values()):
            raise ChannelUnavailable(f"{self.name}: no target")
        return rpc, to

    async def send_text(self, target: DeliveryContext, text: str) -> SendReceipt:
        """One markdown chunk as plain text with Signal's text styles (D161)."""
        rpc, to = self._client(target)
        styled = styled_text(text)
        styles = [f"{start}:{length}:{style}" for start, length, style in styled.styles]
        stamp = await rpc.send(to, styled.text or text, styles, f"{self.name} to {to}")
        return SendReceipt(message_id=stamp)

    async def send_media(
        self, target: DeliveryContext, media: MediaItem, ref: ChunkRef
    ) -> SendReceipt:
        """A message carrying the file, its caption as the text (D78, D157): Signal shows
        images inline and plays audio; a voice note goes as audio without a file name."""
        rpc, to = self._client(target)
        uri = data_uri(media.data, media.mime, None if media.voice else media.name)
        stamp = await rpc.send_attachment(to, uri, media.caption, f"{self.name} to {to}")
        return SendReceipt(message_id=stamp)

    async def send_typing(self, target: DeliveryContext) -> None:
        """Read receipts for the messages this turn answers, then "typing…" (D163); both
        only when the gate lets the session speak."""
        rpc, to = self._client(target)
        where = f"{self.name} to {to}"
        owed = self._owed.pop(to, {})
        for sender, stamps in owed.items():
            await rpc.read_receipt(sender, stamps, where)
        await rpc.typing(to, where)
