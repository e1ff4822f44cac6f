"""`/send on|off|inherit`: the owner's per-session send-policy override (D4, reference R5.4)."""

from __future__ import annotations

from core.api.plugins import (
    OWNER,
    SEND_USAGE,
    CommandInvocation,
    CommandSpec,
    ParsedCommand,
    is_send_command,
    parse_send_mode,
    send_set_text,
)
from core.api.sessions import effective_policy_text

_OVERRIDE = {"allow": "allow", "deny": "deny", "inherit": None}


async def handle_send(inv: CommandInvocation) -> str:
    mode = parse_send_mode(inv.command.args)
    env = inv.env
    if mode is None:
        return effective_policy_text(env.gate.decide(inv.entry))
    if mode == "invalid":
        return SEND_USAGE
    await env.store.update_session(inv.entry.key, send_policy=_OVERRIDE[mode])
    return send_set_text(mode)


def _matches(parsed: ParsedCommand) -> bool:
    return is_send_command(parsed)


SPEC = CommandSpec(
    name="send",
    description="Show or set where the bot may speak: /send on|off|inherit",
    handler=handle_send,
    permission=OWNER,
    usage=SEND_USAGE,
    matches=_matches,
)
