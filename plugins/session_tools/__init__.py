"""The session tools pack: sessions_list, sessions_history, sessions_search, session_status,
sessions_send, sessions_spawn, agents_list, subagents, sessions_yield and ask_user (D73). The
pack owns their code (the agent-to-agent loop, visibility, reference resolution, results); core
gives them only the tool engine and their environment (D30)."""

from __future__ import annotations

from core.api.plugins import PluginContext
from plugins.session_tools import (
    agents_list,
    ask_user,
    session_status,
    sessions_history,
    sessions_list,
    sessions_search,
    sessions_send,
    sessions_spawn,
    sessions_yield,
    subagents,
)


def register(ctx: PluginContext) -> None:
    for spec in (
        sessions_list.SPEC,
        sessions_history.SPEC,
        sessions_search.SPEC,
        session_status.SPEC,
        sessions_send.SPEC,
        sessions_spawn.SPEC,
        agents_list.SPEC,
        subagents.SPEC,
        sessions_yield.SPEC,
        ask_user.SPEC,
    ):
        ctx.register_tool(spec)
