"""`sessions_list`: sessions visible to the requester, newest first (reference R2.1, D2)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.api.plugins import RowBuilder, ToolArgs, ToolContext, ToolSpec, floor_clamp
from core.api.sessions import SessionQuery, now_ms
from plugins.session_tools.results import SessionsListResult
from plugins.session_tools.visibility import scope_sessions, visibility_for

if TYPE_CHECKING:
    from core.api.plugins import ToolEnv

KINDS = ("main", "group", "cron", "hook", "node", "other")
DEFAULT_LIMIT, MAX_LIMIT, MAX_MESSAGES = 50, 200, 20
MAX_ACTIVE_MINUTES = 100 * 366 * 24 * 60
"""A century: a larger `activeMinutes` filters nothing more, and `now - minutes` must stay a
64-bit integer for the database (1e300 was a 500 on /tools/invoke and /mcp)."""


class SessionsListArgs(ToolArgs):
    kinds: list[str] | str | None = None
    limit: float | None = None
    active_minutes: float | None = None
    message_limit: float | None = None


def _kinds(value: list[str] | str | None) -> tuple[str, ...]:
    raw = [value] if isinstance(value, str) else (value or [])
    return tuple(dict.fromkeys(k for v in raw if (k := v.strip().lower()) in KINDS))


async def sessions_list(
    env: ToolEnv, ctx: ToolContext, args: SessionsListArgs
) -> SessionsListResult:
    vis = visibility_for(env, ctx)
    limit = floor_clamp(args.limit, default=DEFAULT_LIMIT, lo=1, hi=MAX_LIMIT)
    active = floor_clamp(args.active_minutes, default=None, lo=1, hi=MAX_ACTIVE_MINUTES)
    message_limit = floor_clamp(args.message_limit, default=0, lo=0, hi=MAX_MESSAGES) or 0
    global_scope = env.config.session.scope == "global"
    query = SessionQuery(
        limit=limit,
        kinds=_kinds(args.kinds),
        updated_since=now_ms() - active * 60_000 if active else None,
        include_reserved=global_scope and not vis.restricted,
        exclude_keys=("unknown",),
    )
    entries = await env.store.list_sessions(await scope_sessions(env, vis, query))  # before `limit`
    recent = (
        await env.store.recent_messages([e.session_id for e in entries], message_limit)
        if message_limit
        else {}
    )
    builder = RowBuilder(env, vis.requester_agent)
    rows = [
        builder.row(e, recent.get(e.session_id, []) if message_limit else None) for e in entries
    ]
    return SessionsListResult(count=len(rows), sessions=rows)


SPEC = ToolSpec(
    name="sessions_list",
    description="List sessions with optional filters and last messages.",
    args_model=SessionsListArgs,
    handler=sessions_list,
    profiles=frozenset({"messaging"}),
    subagents=False,  # the sub-agent deny list (R4.7)
    mcp=True,
)
