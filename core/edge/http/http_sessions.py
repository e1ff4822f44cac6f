"""`GET /api/sessions` (filtered list) and `POST /api/sessions/{key}/reset` (D181).

The list filters by kind, channel, agent and text in SQL before the limit (as D2 asks of
`sessions_list`), and each row is the `sessions_list` row (the same builder) plus the canonical
key and the effective send policy with what decided it, resolved by the outbound gate's own
`decide` (D5): the console shows what the gate will do, not a second guess of it.
A reset is `/new`'s reset (`core.engine.runs.reset`), so chat and HTTP reset a session the same way.
"""

from __future__ import annotations

import re
from typing import Any

from aiohttp import web

from core.edge.http.appkeys import RUNTIME, SECRET
from core.edge.http.auth import is_authorized, unauthorized
from core.edge.http.edge import HttpError
from core.edge.http.http_api import _key, entry_row
from core.engine.runs.reset import reset_session
from core.features.tools.rows import RowBuilder
from core.model.text import clean_text
from core.store import SessionEntry, SessionQuery

KINDS = ("main", "group", "cron", "hook", "node", "other")
DEFAULT_LIMIT, MAX_LIMIT = 100, 500
MAX_TEXT = 200


def names_pattern(item: str) -> str:
    """A comma-separated list of `item`s, spaces around each allowed, or blank (= all)."""
    return rf"^ *$|^ *(?:{item}) *(?:, *(?:{item}) *)*$"


NAME_LIST = names_pattern(r"[a-z0-9][a-z0-9_-]{0,63}")
KIND_LIST = names_pattern("|".join(KINDS))


def _names(request: web.Request, param: str, pattern: str) -> tuple[str, ...]:
    """A filter given as a comma-separated list; 400 when it does not match `pattern`."""
    raw = request.query.get(param, "")
    if not re.fullmatch(pattern, raw):
        raise HttpError(
            400,
            f"invalid {param}: {raw[:64]!r} (comma-separated "
            + ("of: " + ", ".join(KINDS) if pattern == KIND_LIST else "lowercase names")
            + ")",
        )
    return tuple(dict.fromkeys(n.strip() for n in raw.split(",") if n.strip()))


def _limit(request: web.Request) -> int:
    raw = request.query.get("limit", str(DEFAULT_LIMIT)).strip()
    if not re.fullmatch(r"[0-9]{1,6}", raw) or not 1 <= int(raw) <= MAX_LIMIT:
        raise HttpError(400, f"limit must be an integer from 1 to {MAX_LIMIT}")
    return int(raw)


def session_rows(request: web.Request, entries: list[SessionEntry]) -> list[dict[str, Any]]:
    rt = request.app[RUNTIME]
    builder = RowBuilder(rt.tool_env, rt.config.default_agent_id())
    return [entry_row(rt.tool_env, entry, builder) for entry in entries]


async def list_sessions(request: web.Request) -> web.Response:
    if not is_authorized(request, request.app[SECRET]):
        return unauthorized()
    rt = request.app[RUNTIME]
    raw_text = request.query.get("q", "")
    if len(raw_text) > MAX_TEXT:
        raise HttpError(400, f"q is too long (max {MAX_TEXT} characters)")
    text = clean_text(raw_text).strip()
    agents = _names(request, "agent", NAME_LIST)
    query = SessionQuery(
        limit=_limit(request),
        kinds=_names(request, "kind", KIND_LIST),
        agent_ids=agents or None,
        channels=_names(request, "channel", NAME_LIST),
        text=text or None,
        exclude_keys=("unknown",),
    )
    entries = await rt.store.list_sessions(query)
    return web.json_response(
        {"ok": True, "count": len(entries), "sessions": session_rows(request, entries)}
    )


async def reset(request: web.Request) -> web.Response:
    if not is_authorized(request, request.app[SECRET]):
        return unauthorized()
    rt = request.app[RUNTIME]
    key = _key(request)
    if await rt.store.get_session(key) is None:
        raise HttpError(404, f"Unknown session: {key}", "not_found")
    entry = await reset_session(rt.runs, rt.store, key, "session reset over HTTP")
    [row] = session_rows(request, [entry])
    return web.json_response({"ok": True, "key": key, "entry": row})


def routes() -> list[web.RouteDef]:
    return [
        web.get("/api/sessions", list_sessions),
        web.post("/api/sessions/{key:.+}/reset", reset),
    ]
