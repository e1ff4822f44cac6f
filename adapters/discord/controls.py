"""Discord's native buttons (D72, D121): message components out, component interactions in.

A button's `custom_id` is the command it stands for (`/approve ABCD2345`, within Discord's 100
characters); its press is an INTERACTION_CREATE, acknowledged as a deferred update and routed
as an inbound message with `button: true` and the interaction's id as its D16 identity.
"""

from __future__ import annotations

import discord

from adapters.discord.normalize import CHANNEL, format_to, interaction_chat
from core.api.channels import Button, DeliveryContext, InboundMessage

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
    user = interaction.user
    chat = interaction_chat(interaction, user.id) if user is not None else None
    if not isinstance(custom_id, str) or user is None or chat is None or user.bot:
        return None
    chat_type, chat_id, thread_id, post_to = chat
    thread = str(thread_id) if thread_id is not None else None
    return InboundMessage(
        channel=CHANNEL,
        account_id=account_id,
        chat_type=chat_type,
        chat_id=str(chat_id),
        thread_id=thread,
        sender_id=str(user.id),
        sender_name=user.display_name,
        text=custom_id,
        button=True,
        mentioned=True,  # a press on the bot's own message addresses the bot
        reply_to=DeliveryContext(
            channel=CHANNEL, to=format_to(post_to), account_id=account_id, thread_id=thread
        ),
        identities=(f"interaction:{interaction.id}",),
    )
