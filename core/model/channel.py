"""The small interface every channel adapter implements (owned by core, D37).

Adapters translate: platform event → :class:`InboundMessage` (handed to the router through the
sink), and text → platform send. They never build session keys and never decide send policy;
their `send_text` and `send_media` are called only by the outbound gate (core.engine.outbound).
"""

from __future__ import annotations

import abc
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from core.model.approvals import Button
from core.model.attachments import Attachment
from core.model.chunking import split_text
from core.model.delivery_context import DeliveryContext
from core.model.inbound import InboundMessage
from core.model.media import MediaItem

if TYPE_CHECKING:
    from aiohttp import web

InboundSink = Callable[[InboundMessage], Awaitable[None]]
Admit = Callable[[InboundMessage], Awaitable[bool]]
GroupTarget = Literal["channel", "kind"]
"""How an announce to a group session is addressed (R3.6): ``"channel"`` = always
``channel:<id>`` (the platform names groups by channel id), ``"kind"`` = ``group:<id>`` or
``channel:<id>`` as the session key says."""


class ChannelTraits(Protocol):
    """What core's rules read of an installed channel: its spec (D94). A channel name that no
    spec declares (an in-process adapter registered by code) has none of these traits."""

    @property
    def name(self) -> str: ...

    @property
    def guarded(self) -> bool:
        """Who may talk is decided by D11 (D39)."""
        ...

    @property
    def main_session(self) -> bool:
        """Every message is the owner's main session (the web chat, D17)."""
        ...

    @property
    def group_target(self) -> GroupTarget: ...

    @property
    def dm_threads(self) -> bool:
        """A direct chat's thread is a session of its own (email, D171)."""
        ...

    @property
    def prefer_session_lookup(self) -> bool:
        """A key-derived announce target is only a fallback: the session's stored route wins
        (R3.6; the reference's WhatsApp plugin sets it)."""
        ...


AdapterState = Literal["stopped", "starting", "standby", "connected", "retrying", "failed"]
"""``standby``: ready to send, but another process holds the receiving connection (D36)."""


class ChannelLease(Protocol):
    """What the supervisor needs of :class:`core.engine.cluster.Leases` (D26)."""

    holder: str
    ttl_ms: int

    async def acquire(self, name: str) -> bool: ...

    async def release(self, name: str) -> None: ...

    async def holder_of(self, name: str) -> str | None: ...


class DeliveryReports(Protocol):
    """Where an adapter says that its platform gave up on a message it had accepted (D166)."""

    async def failed(self, channel: str, account_id: str, message_id: str, reason: str) -> bool:
        """Mark the chunk with that platform message id, and its delivery, `failed`."""


@dataclass(frozen=True, slots=True)
class CommandMenu:
    """The chat commands a platform's native menu shows (D74): `everyone`'s in the default
    scope, `every` command in each owner's private chat; (name, description) pairs."""

    everyone: tuple[tuple[str, str], ...] = ()
    every: tuple[tuple[str, str], ...] = ()
    owner_ids: tuple[str, ...] = ()


@dataclass(slots=True)
class SendReceipt:
    """What the platform answered for one sent chunk."""

    message_id: str | None = None


@dataclass(frozen=True, slots=True)
class ChunkRef:
    """Names one chunk of one delivery on the platform, so a resend can be recognised."""

    delivery_id: int
    index: int

    @property
    def nonce(self) -> str:
        """Discord nonce: unique per chunk, at most 25 characters."""
        return f"ct{self.delivery_id}.{self.index}"[:25]


@dataclass(slots=True)
class AdapterStatus:
    channel: str
    account_id: str
    state: AdapterState
    detail: str | None = None
    extra: dict[str, str | int] = field(default_factory=dict)
    """Figures of the platform's own, as JSON values: a count is an int (D134)."""

    def to_wire(self) -> dict[str, object]:
        return {
            "channel": self.channel,
            "accountId": self.account_id,
            "state": self.state,
            "detail": self.detail,
            **self.extra,
        }


class ChannelAdapter(abc.ABC):
    """One account on one platform.

    `send_text` raises the DeliveryError subclasses of core.model.errors (RateLimited with the
    platform's retry-after, TargetNotFound, TargetForbidden, ChannelUnavailable) so the gate can
    retry or record the failure.
    """

    channel: str
    account_id: str = "default"
    text_limit: int = 4000
    #: When the connection last received something (ms): an update, an event, an empty long
    #: poll, a pong. Shown by `/healthz`; the watchdog reconnects a channel silent too long.
    last_receive_ms: int | None = None
    #: How an in-doubt chunk is settled after a crash (D16): "resend" once (no platform
    #: support), "nonce" (resend with the same nonce; the platform drops a repeat), "lookup"
    #: (find it by its delivery id in the chat, resend only when absent).
    reconcile: str = "resend"
    #: True when `send_text` takes `ref=ChunkRef` (a nonce or metadata naming the chunk).
    chunk_refs: bool = False
    #: Set by the runtime before `start` (D36): held by one process of a cluster, which alone
    #: receives on a polling/socket connection. None: receive unconditionally.
    connection_lease: ChannelLease | None = None
    #: Set by the runtime before `start` (D166): for platforms that accept a message and report
    #: later that it could not be delivered (WhatsApp's `failed` status). None: not reported.
    delivery_reports: DeliveryReports | None = None
    #: Set by the runtime before `start` (D174): D11's verdict on a would-be message, for a
    #: platform that must accept before it can receive at all (a Matrix invite). The same
    #: admission as every message, refusals counted and logged; it sends nothing for a sender
    #: under ``allowlist`` or ``disabled``. None: no gateway to ask.
    admission: Admit | None = None
    #: Set by the runtime before `start` (D74): the commands its native menu registers (by
    #: the connection holder, at start). None: no menu.
    command_menu: CommandMenu | None = None

    @abc.abstractmethod
    async def start(self, sink: InboundSink) -> None:
        """Connect and begin delivering inbound messages to `sink`; must not block forever."""

    @abc.abstractmethod
    async def stop(self) -> None:
        """Disconnect; safe to call twice."""

    @abc.abstractmethod
    async def send_text(self, target: DeliveryContext, text: str) -> SendReceipt:
        """Send one chunk (already within `text_limit`) to `target`."""

    #: The largest file `send_media` sends (bytes); 0: the channel sends no media, and the gate
    #: sends a text naming the file instead (D78, D150).
    media_limit: int = 0
    #: How an in-doubt *media* chunk is settled after a crash; None: as `reconcile` says. A
    #: platform whose lookup cannot find uploaded files resends them once instead ("resend").
    media_reconcile: str | None = None

    def media_limit_for(self, media: MediaItem) -> int:
        """The size limit for this item (platforms limit photos and files differently)."""
        return self.media_limit

    async def send_media(
        self, target: DeliveryContext, media: MediaItem, ref: ChunkRef
    ) -> SendReceipt:
        """Send one media item with its caption (D78): a photo, a file, a voice note. Called
        only by the outbound gate, for items within `media_limit_for`; `ref` names the chunk
        as for `send_text` (a nonce, metadata) where the platform can carry it."""
        raise NotImplementedError(f"{self.channel} sends no media")

    #: Least seconds between two preview updates (platform edit rate limits); 0 = every delta.
    preview_interval: float = 1.0

    def chunks(self, text: str) -> list[str]:
        """Split a markdown reply into pieces `send_text` can send (format-aware per platform)."""
        return split_text(text, self.text_limit)

    async def send_preview(self, target: DeliveryContext, run_id: str, text: str) -> None:
        """Show a partial reply while the model streams; adapters without previews ignore it."""
        return None

    async def send_final(self, target: DeliveryContext, run_id: str, text: str) -> SendReceipt:
        """The first chunk of run `run_id`'s reply: replaces its live preview where there is one."""
        return await self.send_text(target, text)

    async def end_preview(self, target: DeliveryContext, run_id: str, status: str) -> None:
        """Run `run_id` ended without a reply (`status`: aborted, error, ...): its partial
        preview stays where it is; adapters forget it (the web chat marks it stopped)."""
        return None

    async def fetch_attachment(self, attachment: Attachment) -> bytes | None:
        """The bytes of an inbound attachment (for image input); ``None`` when unsupported."""
        return None

    def chat_of(self, to: str) -> str:
        """The `to` this platform's own messages carry (their reply route) for a chat that `to`
        names in any form `send_text` accepts (a kind prefix, spaces): the send policy of the
        chat a delivery lands in is found by it (D179)."""
        return to.strip()

    def dm_target(self, user_id: str) -> str:
        """The `to` of a direct chat with `user_id` (an owner's DM for an approval, D72)."""
        return user_id

    async def send_buttons(
        self, target: DeliveryContext, text: str, buttons: tuple[Button, ...]
    ) -> SendReceipt:
        """Send `text` with native buttons (D72, D73); a press comes back as an inbound message
        whose text is the button's command. Without buttons the text alone (it names the
        commands to type)."""
        return await self.send_text(target, text)

    async def edit_text(self, target: DeliveryContext, message_id: str, text: str) -> None:
        """Replace a sent message's text and remove its buttons (a decided question, D72);
        adapters that cannot edit ignore it."""
        return None

    async def react(self, target: DeliveryContext, message_id: str, emoji: str | None) -> None:
        """Set the bot's reaction on a message, replacing its earlier one (None: remove it,
        D74); adapters without reactions ignore it."""
        return None

    async def send_typing(self, target: DeliveryContext) -> None:
        """Show "typing…" in `target` for a few seconds; adapters without it ignore this."""
        return None

    @abc.abstractmethod
    def status(self) -> AdapterStatus:
        """Connection state for /healthz and `crosstalk channels status`."""

    async def find_chunk(self, target: DeliveryContext, ref: ChunkRef) -> SendReceipt | None:
        """`reconcile == "lookup"`: the chunk's message if it reached the chat, else None."""
        return None

    async def restart_connection(self, reason: str) -> None:
        """The watchdog saw no traffic for too long: drop the connection and connect again."""
        return None

    @property
    def mention_patterns(self) -> tuple[str, ...]:
        """Texts that address the bot in a group (stripped before command parsing)."""
        return ()

    @property
    def bot_username(self) -> str | None:
        return None


@runtime_checkable
class HttpMounted(Protocol):
    """An adapter that serves HTTP routes (webhooks, the web chat) on the gateway's server;
    every process mounts them (D36). Checked with ``isinstance``, declared by type (D37)."""

    def mount(self, app: web.Application) -> None:
        """Add this adapter's routes to the gateway application."""
