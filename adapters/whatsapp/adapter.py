"""One WhatsApp Business phone number as a channel account (D77, D161–D163).

Inbound messages arrive on the gateway's own server (``adapters.whatsapp.webhook``); replies,
read receipts with "typing…", and media downloads go through the Graph API
(``adapters.whatsapp.graph``). The "connection" the supervisor keeps (D35) is the Graph API's
acceptance of the token and phone number id: a rejected token fails the channel at start, a
network error retries in the background while webhooks are still stored.

WhatsApp lets a business answer free-form only within 24 hours of the user's last message. The
adapter remembers each user's last message and refuses a send past that window before calling
Graph; Graph's own verdict (error 131047, at once or in a later ``failed`` status) is the
authority either way, and every such refusal is a ``failed`` delivery whose reason names the
window (D162).
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import aiohttp
from aiohttp import web

from adapters.styled import whatsapp_text
from adapters.supervised import SupervisedAdapter
from adapters.whatsapp.graph import (
    WINDOW_CLOSED,
    GraphClient,
    GraphError,
    OutsideServiceWindow,
    delivery_error,
)
from adapters.whatsapp.media import DOCUMENT_LIMIT, message_kind, message_object
from adapters.whatsapp.spec import CHANNEL, WEBHOOK_PATH, WhatsAppAccountConfig
from adapters.whatsapp.webhook import contact_names, mount, signature_valid, to_inbound
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
    secret_value,
)
from core.api.rendering import split_markdown

log = logging.getLogger(__name__)

TEXT_LIMIT = 4096
WINDOW_SECONDS = 24 * 3600
TYPING_RENEW = 20.0  # WhatsApp shows the indicator up to 25 s, until the reply arrives
_REMEMBER = 10_000  # users whose last message (window, typing) is kept, least recent dropped
_NETWORK = (aiohttp.ClientError, TimeoutError, OSError)


class _Rejected(Exception):
    """Graph refused the token or the phone number id: configuration, not worth retrying."""


class WhatsAppAdapter(SupervisedAdapter):
    """Also ``HttpMounted``: every gateway process serves the webhook (D36)."""

    channel = CHANNEL
    text_limit = TEXT_LIMIT
    reconcile = "resend"  # Graph has no idempotency key: an in-doubt chunk goes once more
    media_limit = DOCUMENT_LIMIT  # D150, D156: a document's 100 MB

    def __init__(
        self,
        config: WhatsAppAccountConfig,
        account_id: str = "default",
        env: ChannelEnv | None = None,
        *,
        clock: Callable[[], float] = time.time,
        retry_initial: float = 1.0,
        retry_max: float = 60.0,
    ) -> None:
        self.config = config
        self.account_id = account_id
        self.phone_number_id = config.phone_number_id or ""
        self.clock = clock
        self.retry_initial, self.retry_max = retry_initial, retry_max
        self._sink: InboundSink | None = None
        self._graph: GraphClient | None = None
        self._lock = asyncio.Lock()  # one webhook request's messages at a time, in order
        self._last: OrderedDict[str, tuple[float, str]] = OrderedDict()  # wa_id → (t, wamid)
        self._typed: dict[str, tuple[str, float]] = {}  # wa_id → (wamid, monotonic sent)
        self._closed: set[str] = set()  # Graph said 131047; open again when the user writes
        self.display_number: str | None = None
        self.late_failures = 0
        """Sends Graph accepted and later reported ``failed`` (a ``failed`` status)."""

    # ---- identity and state -----------------------------------------------------------------

    @property
    def started(self) -> bool:
        return self._sink is not None

    def status(self) -> AdapterStatus:
        extra: dict[str, str | int] = {"phoneNumberId": self.phone_number_id}
        if self.display_number:
            extra["phoneNumber"] = self.display_number
        return self._status(extra)

    def secret_matches(self, raw: bytes, signature: str) -> bool:
        return signature_valid(raw, signature, secret_value(self.config.app_secret) or "")

    def verify_token_matches(self, token: str) -> bool:
        expected = secret_value(self.config.verify_token) or ""
        return bool(expected) and hmac.compare_digest(token.encode(), expected.encode())

    # ---- lifecycle ----------------------------------------------------------------------------

    def mount(self, app: web.Application) -> None:
        mount(app, WEBHOOK_PATH, self)

    async def start(self, sink: InboundSink) -> None:
        if self._sup is not None:
            return
        missing = [
            label
            for label, value in (
                ("phoneNumberId", self.config.phone_number_id),
                ("accessToken", secret_value(self.config.access_token)),
                ("appSecret", secret_value(self.config.app_secret)),
                ("verifyToken", secret_value(self.config.verify_token)),
            )
            if not value
        ]
        if missing:
            self._failed = f"not configured: {', '.join(missing)}"
            raise ChannelUnavailable(f"{self.name}: {self._failed}")
        self._failed = None
        self._graph = GraphClient(
            self.config.api_base_url,
            self.phone_number_id,
            secret_value(self.config.access_token) or "",
        )
        self._sink = sink
        await self._supervise(leased=False)  # the webhook: every process receives (D36)

    async def stop(self) -> None:
        await self._unsupervise()
        self._sink = None
        graph, self._graph = self._graph, None
        if graph is not None:
            await graph.close()

    # The Connection the supervisor drives (core.engine.channels.supervisor).

    async def prepare(self) -> None:
        """The phone number's profile: proves the token and the phone number id."""
        assert self._graph is not None
        try:
            profile = await self._graph.phone_number()
        except GraphError as exc:
            if exc.status in (400, 401, 403, 404) or exc.code == 190:
                raise _Rejected(
                    f"Graph refused the accessToken or phoneNumberId ({exc.describe()})"
                ) from exc
            raise
        self.display_number = str(profile.get("display_phone_number") or "") or None

    async def open(self) -> None:
        return None  # webhooks arrive on the gateway's server

    async def wait_closed(self) -> None:
        await asyncio.Event().wait()

    async def close(self) -> None:
        return None

    def fatal_reason(self, exc: BaseException) -> str | None:
        return str(exc) if isinstance(exc, _Rejected) else None

    # ---- inbound ------------------------------------------------------------------------------

    async def receive(self, value: dict[str, Any]) -> None:
        """One webhook change: its messages to the router, in order; its statuses read."""
        self.last_receive_ms = int(time.time() * 1000)
        names = contact_names(value)
        async with self._lock:
            for message in value.get("messages") or []:
                msg = (
                    to_inbound(message, account_id=self.account_id, names=names)
                    if isinstance(message, dict)
                    else None
                )
                if msg is None or self._sink is None:
                    continue
                self._remember(msg)
                await self._sink(msg)
        for status in value.get("statuses") or []:
            if isinstance(status, dict) and status.get("status") == "failed":
                await self._late_failure(status)

    def _remember(self, msg: InboundMessage) -> None:
        sent_at = (msg.timestamp_ms / 1000) if msg.timestamp_ms else self.clock()
        known = self._last.get(msg.chat_id)
        if known is None or sent_at >= known[0]:
            self._last[msg.chat_id] = (sent_at, msg.message_id or "")
        self._last.move_to_end(msg.chat_id)
        self._closed.discard(msg.chat_id)
        while len(self._last) > _REMEMBER:
            old, _ = self._last.popitem(last=False)
            self._typed.pop(old, None)
            self._closed.discard(old)

    async def _late_failure(self, status: dict[str, Any]) -> None:
        """Graph accepted a message and later could not deliver it: the delivery log says so
        (D166), and a closed window fails the next reply at once."""
        errors = status.get("errors") or [{}]
        first = errors[0] if isinstance(errors[0], dict) else {}
        code = first.get("code")
        why = first.get("title") or first.get("message") or "unknown error"
        recipient = str(status.get("recipient_id") or "")
        where = f"{self.name} to {recipient}"
        if code == WINDOW_CLOSED:
            self._closed.add(recipient)
            reason = (
                f"OutsideServiceWindow: {where}: reported by WhatsApp after sending: "
                f"outside the 24-hour customer-service window (Graph error 131047)"
            )
        else:
            reason = (
                f"DeliveryError: {where}: reported by WhatsApp after sending: Graph "
                f"error {code}: {why}"
            )
        self.late_failures += 1
        log.warning(
            "%s: message %s failed after sending (Graph error %s: %s)",
            where,
            status.get("id"),
            code,
            why,
        )
        if self.delivery_reports is not None and status.get("id"):
            await self.delivery_reports.failed(CHANNEL, self.account_id, str(status["id"]), reason)

    async def fetch_attachment(self, attachment: Attachment) -> bytes | None:
        if not attachment.file_id or self._graph is None:
            return None
        try:
            return await self._graph.media(attachment.file_id)
        except GraphError as exc:
            raise delivery_error(exc, f"{self.name} media {attachment.name}") from exc
        except _NETWORK as exc:
            raise ChannelUnavailable(f"{self.name}: media download failed: {exc}") from exc

    # ---- outbound -----------------------------------------------------------------------------

    def chat_of(self, to: str) -> str:
        """`+4915…` → `4915…`, the `wa_id` webhooks carry (D179)."""
        return to.strip().lstrip("+")

    def chunks(self, text: str) -> list[str]:
        """WhatsApp's markdown subset (D161), split at the text message's limit."""
        return split_markdown(whatsapp_text(text), TEXT_LIMIT) or [""]

    def _client(self, target: DeliveryContext) -> tuple[GraphClient, str]:
        graph = self._graph
        if graph is None or self.status().state in ("stopped", "failed"):
            raise ChannelUnavailable(
                f"{self.name} is not connected ({self.status().detail or self.status().state})"
            )
        to = (target.to or "").strip().lstrip("+")
        if not to:
            raise ChannelUnavailable(f"{self.name}: no target number")
        return graph, to

    def window_open(self, wa_id: str) -> bool | None:
        """Whether the 24-hour window with `wa_id` is open (None: no message seen here)."""
        if wa_id in self._closed:
            return False
        known = self._last.get(wa_id)
        return None if known is None else self.clock() - known[0] < WINDOW_SECONDS

    def _check_window(self, to: str, where: str) -> None:
        """Refuse before calling Graph when the 24-hour window is known to be closed (D162)."""
        if self.window_open(to) is False:
            why = (
                "WhatsApp reported error 131047 for an earlier reply"
                if to in self._closed
                else f"the user last wrote {(self.clock() - self._last[to][0]) / 3600:.0f} h ago"
            )
            raise OutsideServiceWindow(
                f"{where}: outside WhatsApp's 24-hour customer-service window ({why}); only "
                f"template messages can reach them until they write again"
            )

    async def send_text(self, target: DeliveryContext, text: str) -> SendReceipt:
        """Send one rendered chunk to the user's wa_id (the gate calls this, and only it)."""
        graph, to = self._client(target)
        where = f"{self.name} to {to}"
        self._check_window(to, where)
        try:
            wamid = await graph.post_text(to, text)
        except GraphError as exc:
            raise delivery_error(exc, where) from exc
        except _NETWORK as exc:
            raise ChannelUnavailable(f"{where}: network error: {exc}") from exc
        return SendReceipt(message_id=wamid)

    def media_limit_for(self, media: MediaItem) -> int:
        return DOCUMENT_LIMIT  # what an image or audio message cannot take goes as a document

    async def send_media(
        self, target: DeliveryContext, media: MediaItem, ref: ChunkRef
    ) -> SendReceipt:
        """The file uploaded, then a message naming it (D78, D156): a photo, a voice note, a
        video or a document. Graph has no idempotency key, so an in-doubt item is sent once
        more after a crash and marked (`reconcile = "resend"`)."""
        graph, to = self._client(target)
        where = f"{self.name} to {to}"
        self._check_window(to, where)
        kind = message_kind(media)
        try:
            media_id = await graph.upload(media.data, media.mime, media.name)
            wamid = await graph.post_media(to, kind, message_object(media, kind, media_id))
        except GraphError as exc:
            raise delivery_error(exc, f"{where} ({kind} {media.name})") from exc
        except _NETWORK as exc:
            raise ChannelUnavailable(f"{where}: network error: {exc}") from exc
        return SendReceipt(message_id=wamid)

    async def send_typing(self, target: DeliveryContext) -> None:
        """Read receipt plus "typing…" for the user's last message (D163); renewed at most
        every 20 s, since one call shows it for up to 25 s."""
        graph, to = self._client(target)
        known = self._last.get(to)
        if known is None or not known[1] or self.window_open(to) is False:
            return
        wamid = known[1]
        shown = self._typed.get(to)
        now = time.monotonic()
        if shown is not None and shown[0] == wamid and now - shown[1] < TYPING_RENEW:
            return
        try:
            await graph.read_and_typing(wamid)
        except GraphError as exc:
            raise delivery_error(exc, f"{self.name} typing to {to}") from exc
        except _NETWORK as exc:
            raise DeliveryError(f"{self.name}: typing: {exc}") from exc
        self._typed[to] = (wamid, now)
