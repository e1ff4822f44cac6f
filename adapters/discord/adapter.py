"""One Discord bot account on discord.py: a supervised gateway connection plus REST sends.

The shared connection supervisor (D35) logs a fresh `discord.Client` in (a closed client cannot
be reopened) and connects it to the gateway only while this process holds the connection's
lease (D36); non-auth failures retry with capped exponential backoff. A rejected token is not
retried: `start()` raises ChannelUnavailable.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import re
import time
from collections.abc import Awaitable
from typing import Any, TypeVar

import discord
import discord.gateway
import discord.http
import yarl

from adapters.base import (
    AdapterState,
    AdapterStatus,
    ChannelAdapter,
    ChunkRef,
    InboundSink,
    MediaItem,
    SendReceipt,
)
from adapters.discord.commands import answer_slash, register_menu
from adapters.discord.controls import button_view, press_inbound
from adapters.discord.errors import bounded
from adapters.discord.normalize import CHANNEL, mention_patterns_for, parse_to, to_inbound
from adapters.discord.render import TEXT_LIMIT, render_chunks
from adapters.discord.spec import DiscordAccountConfig, DiscordConfig
from adapters.previews import EditablePreviews
from core.api.channels import (
    Attachment,
    Backoff,
    Button,
    ChannelEnv,
    ChannelUnavailable,
    ConnectionSupervisor,
    DeliveryContext,
    DeliveryError,
    TargetNotFound,
    secret_value,
)

log = logging.getLogger(__name__)
T = TypeVar("T")
MEDIA_LIMIT = 10 * 1024 * 1024  # a bot's upload limit in a server without boosts (D150)

# Gateway close codes that retrying cannot fix: auth failed, bad shard, bad/privileged intents.
_FATAL_CLOSE = {
    4004: "token rejected by the gateway (4004)",
    4010: "invalid shard (4010)",
    4011: "sharding required (4011)",
    4012: "invalid API version (4012)",
    4013: "invalid intents (4013)",
    4014: "privileged intents not enabled for this bot (4014)",
}
_API_VERSION_RE = re.compile(r"/api/v\d+$")


def apply_endpoint_overrides(api_base_url: str | None, gateway_url: str | None) -> None:
    """Point discord.py at another API/gateway (a fake, a proxy).

    discord.py only reads two process-global class attributes, so the override applies to every
    Discord account in the process; a second, different value is refused loudly.
    """
    if api_base_url:
        base = api_base_url.rstrip("/")
        base = base if _API_VERSION_RE.search(base) else f"{base}/api/v10"
        _set_global(discord.http.Route, "BASE", base)
    if gateway_url:
        _set_global(discord.gateway.DiscordWebSocket, "DEFAULT_GATEWAY", yarl.URL(gateway_url))


_applied: dict[str, object] = {}


def _set_global(owner: type, name: str, value: object) -> None:
    key = f"{owner.__name__}.{name}"
    if key in _applied and _applied[key] != value and getattr(owner, name) == _applied[key]:
        raise ChannelUnavailable(
            f"discord: {key} is already set to {_applied[key]} for another account; "
            "discord.py supports one API/gateway endpoint per process"
        )
    setattr(owner, name, value)
    _applied[key] = value


class _Client(discord.Client):
    """discord.Client that forwards its events to the adapter."""

    def __init__(self, adapter: DiscordAdapter, **options: Any) -> None:
        super().__init__(**options)
        self._adapter = adapter

    async def on_ready(self) -> None:
        self._adapter._on_connected(self)

    async def on_resumed(self) -> None:
        self._adapter._on_connected(self)

    async def on_disconnect(self) -> None:
        self._adapter._on_disconnected(self)

    async def on_message(self, message: discord.Message) -> None:
        await self._adapter._on_message(self, message)

    async def on_message_edit(self, before: discord.Message, after: discord.Message) -> None:
        await self._adapter._on_edit(self, after)

    async def on_socket_raw_receive(self, msg: str) -> None:
        self._adapter._on_receive(self)

    async def on_interaction(self, interaction: discord.Interaction) -> None:
        await self._adapter._on_interaction(self, interaction)


class DiscordAdapter(EditablePreviews):
    """`channels.discord` (one account). Replies go to `channel:<id>`, or the thread id if set."""

    channel = CHANNEL
    media_limit = MEDIA_LIMIT
    text_limit = 2000
    reconcile = "nonce"  # D16: a resend with the same nonce is dropped by Discord itself
    chunk_refs = True

    def __init__(
        self,
        config: DiscordAccountConfig,
        account_id: str = "default",
        env: ChannelEnv | None = None,
        *,
        guild_ready_timeout: float = 2.0,
        start_timeout: float = 15.0,
        reconnect: bool = True,
        retry_initial: float = 1.0,
        retry_max: float = 60.0,
        send_timeout: float = 30.0,
    ) -> None:
        self.account_id = account_id
        self.config = config
        self.guild_ready_timeout = guild_ready_timeout
        self.start_timeout = start_timeout
        self.reconnect = reconnect
        self.retry_initial = retry_initial
        self.retry_max = retry_max
        self.send_timeout = send_timeout
        """Seconds a REST call may wait for Discord's answer before it is retried (D142)."""
        self._client: _Client | None = None
        self._sink: InboundSink | None = None
        self._sup: ConnectionSupervisor | None = None
        self._gateway: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._failed: str | None = None  # why start refused, shown while stopped
        self._token = ""
        self._bot_id: int | None = None
        self._bot_name: str | None = None

    # ---- identity ---------------------------------------------------------------------------

    @property
    def mention_patterns(self) -> tuple[str, ...]:
        return mention_patterns_for(self._bot_id)

    @property
    def bot_username(self) -> str | None:
        return self._bot_name

    def _label(self) -> str:
        return f"{CHANNEL} account {self.account_id}"

    # ---- lifecycle (D35: one supervisor; D36: the gateway only while holding the lease) ----

    async def start(self, sink: InboundSink) -> None:
        token = secret_value(self.config.token)
        if not token:
            self._failed = "no token configured"
            raise ChannelUnavailable(
                f"{self._label()}: no token configured (channels.discord.token)"
            )
        apply_endpoint_overrides(self.config.api_base_url, self.config.gateway_url)
        self._sink, self._token, self._failed = sink, token, None
        self._ready = asyncio.Event()
        self._sup = ConnectionSupervisor(
            self._label(),
            self,
            backoff=Backoff(self.retry_initial, self.retry_max),
            lease=self.connection_lease,
            lease_name=f"channel:{CHANNEL}:{self.account_id}",
        )
        try:
            await self._sup.start()
        except ChannelUnavailable:
            await self.stop()
            raise

    async def stop(self) -> None:
        sup, self._sup = self._sup, None
        if sup is not None:
            await sup.stop()
            if sup.state == "failed":
                self._failed = sup.detail
        await self.close()  # the logged-in client too: nothing is sent after a stop
        self._client = None

    async def wait_until_connected(self) -> None:
        """Return once the gateway session is ready (callers bound it with a timeout)."""
        await self._ready.wait()

    def status(self) -> AdapterStatus:
        extra: dict[str, str | int] = (
            {"botId": str(self._bot_id)} if self._bot_id is not None else {}
        )
        sup = self._sup
        if sup is None:
            state: AdapterState = "failed" if self._failed else "stopped"
            return AdapterStatus(self.channel, self.account_id, state, self._failed, extra)
        if sup.holder:
            extra["holder"] = sup.holder
        return AdapterStatus(self.channel, self.account_id, sup.state, sup.detail, extra)

    @property
    def _state(self) -> AdapterState:
        return self.status().state

    def _new_client(self) -> _Client:
        intents = discord.Intents.default()
        intents.message_content = True  # privileged: without it guild text arrives blank
        # model text must not ping @everyone/@here or roles
        mentions = discord.AllowedMentions(everyone=False, roles=False, users=True)
        return _Client(
            self,
            intents=intents,
            guild_ready_timeout=self.guild_ready_timeout,
            heartbeat_timeout=30.0,
            max_ratelimit_timeout=30.0,
            allowed_mentions=mentions,
            enable_debug_events=True,
        )  # on_socket_raw_receive: last receive time

    # The Connection the supervisor drives (core.engine.channels.supervisor). A closed
    # discord.Client cannot be reopened, so each connection logs a fresh one in.

    async def prepare(self) -> None:
        """Log in over REST (enough to send, in standby too)."""
        if (
            self._client is not None
            and not self._client.is_closed()
            and self._client.user is not None
        ):
            return
        client = self._client = self._new_client()
        try:
            await client.login(self._token)
        except BaseException:
            await client.close()
            self._client = None
            raise
        if client.user is not None:
            self._bot_id, self._bot_name = client.user.id, client.user.name

    async def open(self) -> None:
        """Connect to the gateway; returns once READY (or raises what ended the attempt)."""
        client = self._client
        assert client is not None
        self._ready.clear()
        self._gateway = asyncio.create_task(
            client.connect(reconnect=self.reconnect), name=f"discord-gateway:{self.account_id}"
        )
        ready = asyncio.create_task(self._ready.wait())
        try:
            await asyncio.wait(
                {ready, self._gateway},
                timeout=self.start_timeout,
                return_when=asyncio.FIRST_COMPLETED,
            )
        finally:
            ready.cancel()
        if self._gateway.done():
            self._gateway.result()  # raises what closed it
            raise ConnectionError("gateway connection closed")
        if not self._ready.is_set():
            raise TimeoutError(f"gateway not ready after {self.start_timeout:g}s")
        if self.command_menu is not None:  # D74, D124: the connection holder registers it
            await register_menu(client, self.command_menu, self._label())

    async def wait_closed(self) -> None:
        if self._gateway is not None:
            await asyncio.shield(self._gateway)
        raise ConnectionError("gateway connection closed")

    async def close(self) -> None:
        client, gateway = self._client, self._gateway
        self._gateway = None
        self._ready.clear()
        if client is not None and not client.is_closed():
            await client.close()
        self._client = None
        if gateway is not None:
            gateway.cancel()
            await asyncio.gather(gateway, return_exceptions=True)

    def fatal_reason(self, exc: BaseException) -> str | None:
        if isinstance(exc, discord.LoginFailure):
            return f"token rejected ({exc})"
        if isinstance(exc, discord.PrivilegedIntentsRequired):
            return _FATAL_CLOSE[4014] + ": enable the Message Content intent"
        if isinstance(exc, discord.ConnectionClosed) and exc.code in _FATAL_CLOSE:
            return _FATAL_CLOSE[exc.code]
        return None

    def _on_connected(self, client: _Client) -> None:
        if client is not self._client:
            return
        if client.user is not None:
            self._bot_id, self._bot_name = client.user.id, client.user.name
        if self._sup is not None:
            self._sup.note("connected")
        self._ready.set()

    def _on_receive(self, client: _Client) -> None:
        if client is self._client:
            self.last_receive_ms = int(time.time() * 1000)

    def _on_disconnected(self, client: _Client) -> None:
        if client is self._client and self._sup is not None:
            self._sup.note("retrying", "gateway disconnected; reconnecting")

    async def _on_message(self, client: _Client, message: discord.Message) -> None:
        sink, bot_id = self._sink, self._bot_id
        if sink is None or bot_id is None or client is not self._client:
            return
        inbound = to_inbound(message, bot_id=bot_id, account_id=self.account_id)
        if inbound is None:
            return
        try:
            await sink(inbound)
        except Exception:
            log.exception("%s: handling message %s failed", self._label(), message.id)

    async def _on_edit(self, client: _Client, message: discord.Message) -> None:
        """MESSAGE_UPDATE: no turn unless `editsStartTurn` (D16); then each edit is new."""
        if not self.config.edits_start_turn:
            return
        sink, bot_id = self._sink, self._bot_id
        if sink is None or bot_id is None or client is not self._client:
            return
        inbound = to_inbound(message, bot_id=bot_id, account_id=self.account_id)
        if inbound is None:
            return
        stamp = message.edited_at.timestamp() if message.edited_at else 0
        await sink(inbound.model_copy(update={"identities": (f"edit:{message.id}:{stamp}",)}))

    async def _on_interaction(self, client: _Client, interaction: discord.Interaction) -> None:
        """A button press (D121) or a slash command from the menu (D125), each acknowledged
        within Discord's 3 s and routed as the command it stands for."""
        sink = self._sink
        if sink is None or client is not self._client:
            return
        if interaction.type == discord.InteractionType.application_command:
            slash = await answer_slash(interaction, account_id=self.account_id, label=self._label())
            if slash is not None:
                await sink(slash)
            return
        if interaction.type != discord.InteractionType.component:
            return
        try:
            await interaction.response.defer()
        except discord.HTTPException as exc:
            log.info("%s: acknowledging a press failed: %s", self._label(), exc)
        inbound = press_inbound(interaction, account_id=self.account_id)
        if inbound is not None:
            await sink(inbound)

    # ---- outbound ---------------------------------------------------------------------------

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
            raise ChannelUnavailable(f"{self._label()} is not connected ({self._state})")
        try:
            kind, snowflake = parse_to(target.to)
            if target.thread_id not in (None, ""):
                kind, snowflake = "channel", int(str(target.thread_id))
        except ValueError as exc:
            raise TargetNotFound(f"{self._label()}: {exc}") from None
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
        return await bounded(call, self.send_timeout, f"{self._label()} → {target.to}")

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
        where = f"{self._label()} → {target.to}"
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


def build(section: DiscordConfig, runtime: object = None, **options: Any) -> list[ChannelAdapter]:
    """One adapter per configured account (``default`` = the section's top-level fields)."""
    return [
        DiscordAdapter(account, account_id, **options)
        for account_id, account in section.iter_accounts()
    ]
