"""The OpenAPI paths of the routes the owner console added (D181–D183).

`core.edge.http.openapi` merges them and gives every client error the one error body (as it does
for the cron and hook routes), so this module needs nothing from it.
"""

from __future__ import annotations

from typing import Any

from core.edge.http.http_sessions import KIND_LIST, KINDS, MAX_LIMIT, MAX_TEXT, NAME_LIST
from core.edge.http.http_usage import MAX_DAYS, USAGE_SCHEMA

_AUTH: list[dict[str, list[str]]] = [{"bearer": []}]
_NAMES = {
    "type": "string",
    "pattern": NAME_LIST,
    "description": "comma-separated lowercase names (blank = all)",
}
_OBJECT = {"type": "object"}


def json_content(schema: dict[str, Any], desc: str) -> dict[str, Any]:
    return {"description": desc, "content": {"application/json": {"schema": schema}}}


_ERRORS = {
    400: "invalid query or body",
    401: "missing or wrong bearer token (or console sign-in)",
    404: "not found",
    408: "the request body did not arrive in time",
}


def errors(*codes: int, **texts: str) -> dict[str, Any]:
    """Error responses by code; `core.edge.http.openapi` adds their body."""
    return {str(c): {"description": texts.get(f"e{c}", _ERRORS[c])} for c in codes}


def _ok(properties: dict[str, Any], desc: str) -> dict[str, Any]:
    schema = {
        "type": "object",
        "required": ["ok", *properties],
        "properties": {"ok": {"const": True}, **properties},
    }
    return json_content(schema, desc)


def console_paths(key: dict[str, Any]) -> dict[str, Any]:
    """The paths; `key` is the session-key path parameter, as the other session routes use."""
    row = {
        "type": "object",
        "required": ["key", "sessionKey", "effectiveSendPolicy"],
        "properties": {
            "key": {"type": "string"},
            "sessionKey": {"type": "string"},
            "effectiveSendPolicy": {"type": "object"},
        },
    }
    return {
        "/api/sessions": {
            "get": {
                "summary": "Sessions, newest first, filtered before the limit; each row as "
                "sessions_list's with sessionKey, agentId and effectiveSendPolicy",
                "security": _AUTH,
                "parameters": [
                    {
                        "name": "kind",
                        "in": "query",
                        "schema": {"type": "string", "pattern": KIND_LIST},
                        "description": f"comma-separated, of: {', '.join(KINDS)}",
                    },
                    {"name": "channel", "in": "query", "schema": _NAMES},
                    {"name": "agent", "in": "query", "schema": _NAMES},
                    {
                        "name": "q",
                        "in": "query",
                        "schema": {"type": "string", "maxLength": MAX_TEXT},
                        "description": "substring of key, label, display name or session id",
                    },
                    {
                        "name": "limit",
                        "in": "query",
                        "schema": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT},
                    },
                ],
                "responses": {
                    "200": _ok(
                        {"count": {"type": "integer"}, "sessions": {"type": "array", "items": row}},
                        "sessions",
                    ),
                    **errors(400, 401, 408),
                },
            }
        },
        "/api/sessions/{key}/reset": {
            "post": {
                "summary": "Reset a session as /new does: its turns stop, a new transcript starts; "
                "key, route, label and send policy stay",
                "security": _AUTH,
                "parameters": [key],
                "responses": {
                    "200": _ok({"key": {"type": "string"}, "entry": row}, "reset entry"),
                    **errors(400, 401, 404, 408, e404="unknown session"),
                },
            }
        },
        "/api/usage": {
            "get": {
                "summary": "Cost and turns over the last `days` UTC days, by day, agent, channel, "
                "session (top 50) and model",
                "security": _AUTH,
                "parameters": [
                    {
                        "name": "days",
                        "in": "query",
                        "schema": {"type": "integer", "minimum": 1, "maximum": MAX_DAYS},
                    }
                ],
                "responses": {"200": json_content(USAGE_SCHEMA, "usage"), **errors(400, 401, 408)},
            }
        },
        "/api/overview": {
            "get": {
                "summary": "Channels (as /healthz), live processes (as /api/cluster), turns queued "
                "and running, failed deliveries in the last 24 h",
                "security": _AUTH,
                "responses": {
                    "200": _ok(
                        {
                            "channels": {"type": "array"},
                            "processes": {"type": "array"},
                            "queue": {
                                "type": "object",
                                "required": ["queued", "running"],
                                "properties": {
                                    "queued": {"type": "integer"},
                                    "running": {"type": "integer"},
                                },
                            },
                            "failedDeliveries24h": {"type": "integer"},
                            "failedSince": {"type": "integer"},
                            "model": {"type": ["string", "null"]},
                            "agents": {"type": "array", "items": {"type": "string"}},
                        },
                        "overview",
                    ),
                    **errors(401, 408),
                },
            }
        },
        "/api/config": {
            "get": {
                "summary": "The effective configuration, secrets masked (as `crosstalk config "
                "check`)",
                "security": _AUTH,
                "responses": {"200": _ok({"config": _OBJECT}, "config"), **errors(401, 408)},
            }
        },
        "/api/hooks": {
            "get": {
                "summary": "Webhook mappings (hooks.mappings), tokens masked",
                "security": _AUTH,
                "responses": {
                    "200": _ok({"hooks": {"type": "array", "items": _OBJECT}}, "hooks"),
                    **errors(401, 408),
                },
            }
        },
        "/api/events": {
            "get": {
                "summary": "Server-sent events for the console: `ready`, then `change` with "
                "{topics: [sessions|deliveries|pairing|cron]} when those lists change "
                "(on any process); `signed-out` when a console sign-in ends. The stream "
                "stays open.",
                "security": _AUTH,
                "responses": {
                    "200": {
                        "description": "event stream",
                        "content": {"text/event-stream": {"schema": {"type": "string"}}},
                    },
                    **errors(401),
                },
            }
        },
    }
