"""Discord gateway events in: messages, edits (D16), button presses (D121) and slash commands
(D125) handed to the router."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import discord

from adapters.base import ChannelAdapter, InboundSink
from adapters.discord.client import AdapterClient
from adapters.discord.commands import answer_slash
from adapters.discord.controls import press_inbound
from adapters.discord.normalize import to_inbound
from adapters.discord.spec import DiscordAccountConfig
from core.api.channels import InboundMessage

log = logging.getLogger("adapters.discord.adapter")  # the adapter's logger, as before the split


class DiscordEvents(ChannelAdapter):
    """Inbound half of :class:`adapters.discord.adapter.DiscordAdapter` (a mixin: its state is
    set in the adapter's ``__init__``)."""

    config: DiscordAccountConfig
    _client: AdapterClient | None
    _sink: InboundSink | None
    _bot_id: int | None

    if TYPE_CHECKING:

        @property
        def name(self) -> str: ...

    def _inbound(
        self, client: AdapterClient, message: discord.Message
    ) -> tuple[InboundSink, InboundMessage] | None:
        """The sink and the message for the router; None while not started, from a client
        that is no longer ours, or for what is no turn (the bot's own messages...)."""
        sink, bot_id = self._sink, self._bot_id
        if sink is None or bot_id is None or client is not self._client:
            return None
        inbound = to_inbound(message, bot_id=bot_id, account_id=self.account_id)
        return None if inbound is None else (sink, inbound)

    async def _on_message(self, client: AdapterClient, message: discord.Message) -> None:
        found = self._inbound(client, message)
        if found is None:
            return
        sink, inbound = found
        try:
            await sink(inbound)
        except Exception:
            log.exception("%s: handling message %s failed", self.name, message.id)

    async def _on_edit(self, client: AdapterClient, message: discord.Message) -> None:
        """MESSAGE_UPDATE: no turn unless `editsStartTurn` (D16); then each edit is new."""
        found = self._inbound(client, message) if self.config.edits_start_turn else None
        if found is None:
            return
        sink, inbound = found
        stamp = message.edited_at.timestamp() if message.edited_at else 0
        await sink(inbound.model_copy(update={"identities": (f"edit:{message.id}:{stamp}",)}))

    async def _on_interaction(
        self, client: AdapterClient, interaction: discord.Interaction
    ) -> None:
        """A button press (D121) or a slash command from the menu (D125), each acknowledged
        within Discord's 3 s and routed as the command it stands for."""
        sink = self._sink
        if sink is None or client is not self._client:
            return
        if interaction.type == discord.InteractionType.application_command:
            slash = await answer_slash(interaction, account_id=self.account_id, label=self.name)
            if slash is not None:
                await sink(slash)
            return
        if interaction.type != discord.InteractionType.component:
            return
        try:
            await interaction.response.defer()
        except discord.HTTPException as exc:
            log.info("%s: acknowledging a press failed: %s", self.name, exc)
        inbound = press_inbound(interaction, account_id=self.account_id)
        if inbound is not None:
            await sink(inbound)
