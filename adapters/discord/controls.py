"""Discord's native buttons (D72, D121): message components out, component interactions in.

A button's `custom_id` is the command it stands for (`/approve ABCD2345`, within Discord's 100
characters); its press is an INTERACTION_CREATE, acknowledged as a deferred update and routed
as an inbound message with `button: true` and the interaction's id as its D16 identity.
"""

from __future__ import annotations

import discord

from adapters.discord.normalize import CHANNEL, format_to
from core.api.channels import Button, ChatType, DeliveryContext, InboundMessage

CUSTOM_ID_LIMIT = 100


def button_view(buttons: tuple[Button, ...]) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    for b in buttons:
        view.add_item(
            discord.ui.Button(
                label=b.label[:80],
                custom_id=b.command[:CUSTOM_ID_LIMIT],
                style=discord.ButtonStyle.secondary,
            )
        )
    return view


def press_inbound(interaction: discord.Interaction, *, account_id: str) -> InboundMessage | None:
    data: object = interaction.data or {}
    custom_id = data.get("custom_id") if isinstance(data, dict) else None
    user, channel_id = interaction.user, interaction.channel_id
    if not isinstance(custom_id, str) or user is None or channel_id is None or user.bot:
        return None
    direct = interaction.guild_id is None
    chat_type: ChatType = "direct" if direct else "channel"
    return InboundMessage(
        channel=CHANNEL,
        account_id=account_id,
        chat_type=chat_type,
        chat_id=str(user.id) if direct else str(channel_id),
        sender_id=str(user.id),
        sender_name=user.display_name,
        text=custom_id,
        button=True,
        mentioned=True,  # a press on the bot's own message addresses the bot
        reply_to=DeliveryContext(channel=CHANNEL, to=format_to(channel_id), account_id=account_id),
        identities=(f"interaction:{interaction.id}",),
    )
