"""Discord's native menu (D74, D124, D125): application commands and slash-command interactions.

The connection holder overwrites the application's global commands at each connection (one
bulk overwrite, so a removed command disappears). Discord cannot show a command to chosen users
with a bot token (per-user command permissions need a user's OAuth2 token), so an owner-only
command is registered for servers only, with `default_member_permissions: "0"` (shown to the
server's administrators, who may grant it to others), and not in DMs, where Discord applies no
permissions; there owners type it, or use the request's buttons. Whatever the menu shows, the
command registry's owner check (D11) decides. Each command takes one optional string option
holding what follows the name. A slash command's interaction is answered at once with an
ephemeral echo of the command (Discord wants an answer within 3 s and has no silent one for a
command), then routed as the command typed; its reply comes through the gate (D125).
"""

from __future__ import annotations

import logging
import re
from typing import Any

import discord

from adapters.discord.normalize import interaction_inbound
from core.api.channels import CommandMenu, InboundMessage

log = logging.getLogger(__name__)

NAME = re.compile(r"^[-_a-z0-9]{1,32}$")  # Discord's rule for a CHAT_INPUT command's name
MAX_COMMANDS = 100  # global CHAT_INPUT commands per application
GUILD, BOT_DM = 0, 1  # interaction contexts
OPTION = "args"


def _command(name: str, description: str, *, owner_only: bool) -> dict[str, Any]:
    cmd: dict[str, Any] = {
        "name": name,
        "type": 1,  # CHAT_INPUT
        "description": (description or name)[:100],
        "options": [
            {
                "type": 3,  # STRING
                "name": OPTION,
                "description": f"What follows /{name}"[:100],
                "required": False,
            }
        ],
        "integration_types": [0],  # installed in a server
        "contexts": [GUILD] if owner_only else [GUILD, BOT_DM],
    }
    if owner_only:
        cmd["default_member_permissions"] = "0"  # administrators only, unless granted
    return cmd


def menu_payload(menu: CommandMenu) -> list[dict[str, Any]]:
    """The bulk overwrite: everyone's commands everywhere; the owner-only ones (those in
    `every` but not in `everyone`) in servers for administrators, and only if there are owners."""
    everyone = {name for name, _ in menu.everyone}
    out = [_command(n, d, owner_only=False) for n, d in menu.everyone if NAME.match(n)]
    if menu.owner_ids:
        out += [
            _command(n, d, owner_only=True)
            for n, d in menu.every
            if n not in everyone and NAME.match(n)
        ]
    if len(out) > MAX_COMMANDS:
        log.warning("discord: %d commands; Discord takes %d", len(out), MAX_COMMANDS)
    return out[:MAX_COMMANDS]


async def register_menu(client: discord.Client, menu: CommandMenu, label: str) -> None:
    """Overwrite the global commands; a refusal is logged (the chat works without a menu)."""
    app_id = client.application_id
    if app_id is None:
        log.warning("%s: no application id; command menu not registered", label)
        return
    try:
        await client.http.bulk_upsert_global_commands(app_id, menu_payload(menu))
    except discord.HTTPException as exc:
        log.warning("%s: command menu not registered: %s", label, exc)


def command_text(data: object) -> str | None:
    """`/name args` from a slash command's interaction data."""
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        return None
    args = ""
    for option in data.get("options") or []:
        if isinstance(option, dict) and option.get("name") == OPTION:
            args = str(option.get("value") or "")
    return f"/{data['name']} {args}".strip()


def slash_inbound(
    interaction: discord.Interaction, text: str, *, account_id: str
) -> InboundMessage | None:
    """The command as a message in the chat it was typed in (a thread's session is its
    channel's, as for a typed message)."""
    return interaction_inbound(interaction, text, account_id=account_id)


async def answer_slash(
    interaction: discord.Interaction, *, account_id: str, label: str
) -> InboundMessage | None:
    """Acknowledge a slash command (an ephemeral echo only its user sees), then what to route."""
    text = command_text(interaction.data)
    if text is None:
        return None
    try:
        await interaction.response.send_message(text, ephemeral=True)
    except discord.HTTPException as exc:  # a replayed interaction was acknowledged already
        log.info("%s: acknowledging a slash command failed: %s", label, exc)
    return slash_inbound(interaction, text, account_id=account_id)
