"""The session tools pack: sessions_list, sessions_history, sessions_send, sessions_spawn,
agents_list."""

from __future__ import annotations

from core.extension.context import PluginContext
from core.tools import (
    agents_list,
    sessions_history,
    sessions_list,
    sessions_send,
    sessions_spawn,
)


def register(ctx: PluginContext) -> None:
    for spec in (sessions_list.SPEC, sessions_history.SPEC, sessions_send.SPEC,
                 sessions_spawn.SPEC, agents_list.SPEC):
        ctx.register_tool(spec)
