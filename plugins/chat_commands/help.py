"""`/help`: the commands this sender may use."""

from __future__ import annotations

from core.api.plugins import CommandInvocation, CommandSpec


async def handle_help(inv: CommandInvocation) -> str:
    specs = inv.env.commands.visible(inv.caller)
    lines = ["⚙️ Commands:"] + [f"/{c.name} — {c.description}" for c in specs]
    return "\n".join(lines)


SPEC = CommandSpec(name="help", description="List the commands you can use", handler=handle_help)
