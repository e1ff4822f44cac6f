"""One Discord bot account on discord.py: a supervised gateway connection plus REST sends.

The shared connection supervisor (D35) logs a fresh `discord.Client` in (a closed client cannot
be reopened) and connects it to the gateway only while this process holds the connection's
lease (D36); non-auth failures retry with capped exponential backoff. A rejected token is not
retried: `start()` raises ChannelUnavailable. The client and the endpoint overrides are in
:mod:`adapters.discord.client`, inbound events in :mod:`adapters.discord.events`, REST sends in
:mod:`adapters.discord.sending`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import discord

from adapters.base import AdapterState, AdapterStatus, ChannelAdapter, InboundSink
from adapters.discord.client import AdapterClient, apply_endpoint_overrides
from adapters.discord.commands import register_menu
from adapters.discord.events import DiscordEvents
from adapters.discord.normalize import CHANNEL, mention_patterns_for
from adapters.discord.sending import DiscordSending
from adapters.discord.spec import DiscordAccountConfig, DiscordConfig
from adapters.supervised import SupervisedAdapter
from core.api.channels import (
    ChannelEnv,
    ChannelUnavailable,
    secret_value,
)

log = logging.getLogger(__name__)
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


class DiscordAdapter(DiscordEvents, DiscordSending, SupervisedAdapter):
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
        self._client: AdapterClient | None = None
        self._sink: InboundSink | None = None
        self._gateway: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
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

    # ---- lifecycle (D35: one supervisor; D36: the gateway only while holding the lease) ----

    async def start(self, sink: InboundSink) -> None:
        token = secret_value(self.config.token)
        if not token:
            self._failed = "no token configured"
            raise ChannelUnavailable(f"{self.name}: no token configured (channels.discord.token)")
        apply_endpoint_overrides(self.config.api_base_url, self.config.gateway_url)
        self._sink, self._token, self._failed = sink, token, None
        self._ready = asyncio.Event()
        await self._supervise()

    async def stop(self) -> None:
        await self._unsupervise()
        await self.close()  # the logged-in client too: nothing is sent after a stop
        self._client = None

    async def wait_until_connected(self) -> None:
        """Return once the gateway session is ready (callers bound it with a timeout)."""
        await self._ready.wait()

    def status(self) -> AdapterStatus:
        return self._status({"botId": str(self._bot_id)} if self._bot_id is not None else {})

    @property
    def _state(self) -> AdapterState:
        return self.status().state

    def _new_client(self) -> AdapterClient:
        intents = discord.Intents.default()
        intents.message_content = True  # privileged: without it guild text arrives blank
        # model text must not ping @everyone/@here or roles
        mentions = discord.AllowedMentions(everyone=False, roles=False, users=True)
        return AdapterClient(
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
            await register_menu(client, self.command_menu, self.name)

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

    def _on_connected(self, client: AdapterClient) -> None:
        if client is not self._client:
            return
        if client.user is not None:
            self._bot_id, self._bot_name = client.user.id, client.user.name
        if self._sup is not None:
            self._sup.note("connected")
        self._ready.set()

    def _on_receive(self, client: AdapterClient) -> None:
        if client is self._client:
            self.last_receive_ms = int(time.time() * 1000)

    def _on_disconnected(self, client: AdapterClient) -> None:
        if client is self._client and self._sup is not None:
            self._sup.note("retrying", "gateway disconnected; reconnecting")


def build(section: DiscordConfig, runtime: object = None, **options: Any) -> list[ChannelAdapter]:
    """One adapter per configured account (``default`` = the section's top-level fields)."""
    return [
        DiscordAdapter(account, account_id, **options)
        for account_id, account in section.iter_accounts()
    ]
