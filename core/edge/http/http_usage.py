"""`GET /api/usage?days=N`: cost and turns by day, agent, channel, session and model (D182)."""

from __future__ import annotations

import re
from typing import Any

from aiohttp import web

from core.edge.http.appkeys import RUNTIME, SECRET
from core.edge.http.auth import is_authorized, unauthorized
from core.edge.http.edge import HttpError
from core.engine.observability.usage import range_start, usage_report
from core.store import now_ms

DEFAULT_DAYS, MAX_DAYS = 30, 366


async def get_usage(request: web.Request) -> web.Response:
    if not is_authorized(request, request.app[SECRET]):
        return unauthorized()
    raw = request.query.get("days", str(DEFAULT_DAYS)).strip()
    if not re.fullmatch(r"[0-9]{1,4}", raw) or not 1 <= int(raw) <= MAX_DAYS:
        raise HttpError(400, f"days must be an integer from 1 to {MAX_DAYS}")
    rt = request.app[RUNTIME]
    until = now_ms() + 1
    since = range_start(until - 1, int(raw))
    groups = await rt.store.usage_cells(since, until)
    return web.json_response(usage_report(groups, since, until))


def routes() -> list[web.RouteDef]:
    return [web.get("/api/usage", get_usage)]


_GROUP = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["key", "turns", "pricedTurns", "costUsd", "inputTokens", "outputTokens"],
        "properties": {
            "key": {"type": "string"},
            "turns": {"type": "integer"},
            "pricedTurns": {"type": "integer"},
            "costUsd": {"type": "number"},
            "inputTokens": {"type": "integer"},
            "outputTokens": {"type": "integer"},
        },
    },
}
USAGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": [
        "ok",
        "since",
        "until",
        "totals",
        "byDay",
        "byAgent",
        "byChannel",
        "byModel",
        "bySession",
        "sessionsTotal",
    ],
    "properties": {
        "ok": {"const": True},
        "since": {"type": "integer"},
        "until": {"type": "integer"},
        "totals": _GROUP["items"],
        "byDay": _GROUP,
        "byAgent": _GROUP,
        "byChannel": _GROUP,
        "byModel": _GROUP,
        "bySession": _GROUP,
        "sessionsTotal": {"type": "integer"},
    },
}
