"""Chat commands: /send, /status, /model, /new, /compact, /stop, /subagents, /pair, /cron,
/approve, /deny, /help, /whoami, /usage, /link, /unlink."""

from __future__ import annotations

from core.api.plugins import PluginContext
from plugins.chat_commands import (
    approve,
    cron,
    link,
    model,
    pair,
    send,
    session,
    subagents,
    usage,
    whoami,
)
from plugins.chat_commands import help as help_cmd


def register(ctx: PluginContext) -> None:
    for spec in (
        send.SPEC,
        *session.SPECS,
        model.SPEC,
        subagents.SPEC,
        pair.SPEC,
        cron.SPEC,
        *approve.SPECS,
        help_cmd.SPEC,
        whoami.SPEC,
        usage.SPEC,
        *link.SPECS,
    ):
        ctx.register_command(spec)
