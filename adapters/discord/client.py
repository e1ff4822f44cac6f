"""The discord.py client: the process-wide API/gateway endpoint overrides, and the
``discord.Client`` subclass that forwards its events to the adapter."""

from __future__ import annotations

import re
from typing import Any, Protocol

import discord
import discord.gateway
import discord.http
import yarl

from core.api.channels import ChannelUnavailable

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


class ClientEvents(Protocol):
    """What the client forwards its events to (the adapter; named here, not imported, so the
    adapter's modules import this one and not the other way round)."""

    def _on_connected(self, client: AdapterClient) -> None: ...
    def _on_disconnected(self, client: AdapterClient) -> None: ...
    def _on_receive(self, client: AdapterClient) -> None: ...
    async def _on_message(self, client: AdapterClient, message: discord.Message) -> None: ...
    async def _on_edit(self, client: AdapterClient, message: discord.Message) -> None: ...
    async def _on_interaction(
        self, client: AdapterClient, interaction: discord.Interaction
    ) -> None: ...


class AdapterClient(discord.Client):
    """discord.Client that forwards its events to the adapter."""

    def __init__(self, adapter: ClientEvents, **options: Any) -> None:
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
