"""`sessions_search`: user and assistant messages across the sessions the caller may see (D66).

The query is read into words and phrases here (:class:`SearchQuery`), so no character of it
reaches the engine's syntax; the caller's scope (the one visibility function, D61) and the
`kinds`/`activeMinutes`/`sessionKey` filters are part of the one statement, before `limit`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.api.plugins import (
    ToolArgs,
    ToolContext,
    ToolInputError,
    ToolSpec,
    floor_clamp,
)
from core.api.sessions import (
    QueryError,
    SearchQuery,
    SessionQuery,
    excerpt,
    now_ms,
    searchable_text,
)
from plugins.session_tools.results import SearchResultRow, SessionsSearchResult
from plugins.session_tools.sessions_history import visible_target
from plugins.session_tools.sessions_list import KINDS, MAX_ACTIVE_MINUTES
from plugins.session_tools.visibility import scope_sessions, visibility_for

if TYPE_CHECKING:
    from core.api.plugins import ToolEnv

DEFAULT_LIMIT, MAX_LIMIT = 10, 50


class SessionsSearchArgs(ToolArgs):
    query: str | None = None
    """Words (all must occur) and "quoted phrases"; case and accents do not matter."""
    limit: float | None = None
    kinds: list[str] | str | None = None
    active_minutes: float | None = None
    session_key: str | None = None
    """Search one session only."""


def _kinds(value: list[str] | str | None) -> tuple[str, ...]:
    raw = [value] if isinstance(value, str) else (value or [])
    return tuple(dict.fromkeys(k for v in raw if (k := v.strip().lower()) in KINDS))


async def sessions_search(
    env: ToolEnv, ctx: ToolContext, args: SessionsSearchArgs
) -> SessionsSearchResult:
    try:
        terms = SearchQuery.parse(args.query or "")
    except QueryError as exc:
        raise ToolInputError(str(exc)) from None
    limit = floor_clamp(args.limit, default=DEFAULT_LIMIT, lo=1, hi=MAX_LIMIT) or DEFAULT_LIMIT
    active = floor_clamp(args.active_minutes, default=None, lo=1, hi=MAX_ACTIVE_MINUTES)
    vis = visibility_for(env, ctx)
    only = None
    if args.session_key is not None and args.session_key.strip():
        only = (await visible_target(env, vis, args.session_key)).key
    scope = SessionQuery(
        kinds=_kinds(args.kinds),
        updated_since=now_ms() - active * 60_000 if active else None,
        include_reserved=env.config.session.scope == "global" and not vis.restricted,
        exclude_keys=("unknown",),
    )
    await scope_sessions(env, vis, scope)
    hits = await env.store.search_messages(terms, scope, limit=limit, session_key=only)
    rows = [
        SearchResultRow(
            session_key=env.keys.display(h.session_key, vis.requester_agent),
            message_id=h.message.id or 0,
            role=h.message.role,
            timestamp=h.message.timestamp,
            excerpt=excerpt(searchable_text(h.message) or h.message.plain_text(), terms),
        )
        for h in hits
    ]
    return SessionsSearchResult(count=len(rows), results=rows)


SPEC = ToolSpec(
    name="sessions_search",
    description=(
        "Search the text of user and assistant messages across the sessions you can see. "
        'All words must occur; use "double quotes" for a phrase. Each result has an excerpt; '
        "open it with sessions_history {sessionKey, messageId}."
    ),
    args_model=SessionsSearchArgs,
    handler=sessions_search,
    profiles=frozenset({"messaging"}),
    subagents=False,  # a session tool: the sub-agent deny list (R4.7)
    mcp=True,
)
