"""The OpenAPI paths of the routes the owner console added (D181–D183).

The shapes come from `core.edge.http.openapi_shapes` like every other path builder's; only the
error texts are the console's own (its routes also take the console sign-in, D79).
`core.edge.http.openapi` merges these paths and adds the edge's 400/401/408 where missing.
"""

from __future__ import annotations

from typing import Any

from core.edge.http.http_sessions import KIND_LIST, KINDS, MAX_LIMIT, MAX_TEXT, NAME_LIST
from core.edge.http.http_usage import MAX_DAYS, USAGE_SCHEMA
from core.edge.http.openapi_shapes import AUTH, errors, json_content, ok_content

_NAMES = {
    "type": "string",
    "pattern": NAME_LIST,
    "description": "comma-separated lowercase names (blank = all)",
}
_OBJECT = {"type": "object"}
_TEXTS = {
    "e400": "invalid query or body",
    "e401": "missing or wrong bearer token (or console sign-in)",
    "e408": "the request body did not arrive in time",
}


def _errors(*codes: int, **texts: str) -> dict[str, Any]:
    """`openapi_shapes.errors` with the console's texts; `texts` override them."""
    return errors(*codes, **{**_TEXTS, **texts})


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
                "security": AUTH,
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
                    "200": ok_content(
                        {"count": {"type": "integer"}, "sessions": {"type": "array", "items": row}},
                        "sessions",
                    ),
                    **_errors(400, 401, 408),
                },
            }
        },
        "/api/sessions/{key}/reset": {
            "post": {
                "summary": "Reset a session as /new does: its turns stop, a new transcript starts; "
                "key, route, label and send policy stay",
                "security": AUTH,
                "parameters": [key],
                "responses": {
                    "200": ok_content({"key": {"type": "string"}, "entry": row}, "reset entry"),
                    **_errors(400, 401, 404, 408, e404="unknown session"),
                },
            }
        },
        "/api/usage": {
            "get": {
                "summary": "Cost and turns over the last `days` UTC days, by day, agent, channel, "
                "session (top 50) and model",
                "security": AUTH,
                "parameters": [
                    {
                        "name": "days",
                        "in": "query",
                        "schema": {"type": "integer", "minimum": 1, "maximum": MAX_DAYS},
                    }
                ],
                "responses": {"200": json_content(USAGE_SCHEMA, "usage"), **_errors(400, 401, 408)},
            }
        },
        "/api/overview": {
            "get": {
                "summary": "Channels (as /healthz), live processes (as /api/cluster), turns queued "
                "and running, failed deliveries in the last 24 h",
                "security": AUTH,
                "responses": {
                    "200": ok_content(
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
                    **_errors(401, 408),
                },
            }
        },
        "/api/config": {
            "get": {
                "summary": "The effective configuration, secrets masked (as `crosstalk config "
                "check`)",
                "security": AUTH,
                "responses": {
                    "200": ok_content({"config": _OBJECT}, "config"),
                    **_errors(401, 408),
                },
            }
        },
        "/api/hooks": {
            "get": {
                "summary": "Webhook mappings (hooks.mappings), tokens masked",
                "security": AUTH,
                "responses": {
                    "200": ok_content({"hooks": {"type": "array", "items": _OBJECT}}, "hooks"),
                    **_errors(401, 408),
                },
            }
        },
        "/api/events": {
            "get": {
                "summary": "Server-sent events for the console: `ready`, then `change` with "
                "{topics: [sessions|deliveries|pairing|cron]} when those lists change "
                "(on any process); `signed-out` when a console sign-in ends. The stream "
                "stays open.",
                "security": AUTH,
                "responses": {
                    "200": {
                        "description": "event stream",
                        "content": {"text/event-stream": {"schema": {"type": "string"}}},
                    },
                    **_errors(401),
                },
            }
        },
    }
