"""Discord's native buttons (D72, D121): message components out, component interactions in.

A button's `custom_id` is the command it stands for (`/approve ABCD2345`, within Discord's 100
characters); its press is an INTERACTION_CREATE, acknowledged as a deferred update and routed
as an inbound message with `button: true` and the interaction's id as its D16 identity.
"""

from __future__ import annotations

import discord

from adapters.discord.normalize import interaction_inbound
from core.api.channels import Button, InboundMessage

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
    if not isinstance(custom_id, str):
        return None
    return interaction_inbound(interaction, custom_id, account_id=account_id, button=True)
