"""`GET /openapi.json`: the OpenAPI 3.1 description of the HTTP API, built here and only here.

Every status a route can answer is declared (the schemathesis run in the test suite checks
responses against this document), including the edge's own answers (`core.edge.http.edge`):
400 for bad bodies and keys, 401, 404/405 as JSON, 408 for a body that did not arrive.
A module that adds routes adds one `<area>_paths(config)` function (here or in an `openapi_*`
module beside this one) and one line in `openapi_spec`; the helpers in
`core.edge.http.openapi_shapes` (`json_content`, `errors`, `key_schema`...) keep the shapes equal.
"""

from __future__ import annotations

from typing import Any

from core.config import CrosstalkConfig
from core.edge.http.http_identities import identity_paths
from core.edge.http.openapi_admin import cluster_paths, pairing_paths, session_paths
from core.edge.http.openapi_openai import chat_paths, openai_paths
from core.edge.http.openapi_shapes import (
    AUTH,
    ERROR,
    ERROR_TEXT,
    NOT_BLANK,
    WS,
    errors,
    json_content,
    key_param,
    key_schema,
    ok_content,
)


def _meta_paths() -> dict[str, Any]:
    health = {
        "type": "object",
        "required": ["ok", "channels"],
        "properties": {
            "ok": {"type": "boolean"},
            "channels": {"type": "array"},
            "model": {"type": ["string", "null"]},
            "process": {
                "type": "object",
                "required": ["id", "leases"],
                "properties": {
                    "id": {"type": "string"},
                    "leases": {"type": "array", "items": {"type": "string"}},
                },
            },
        },
    }
    return {
        "/healthz": {
            "get": {
                "summary": "Liveness and channel states (without the token only `ok` and each "
                "channel's state, refused and duplicatesDropped, D81)",
                "responses": {
                    "200": json_content(health, "healthy"),
                    "503": json_content(health, ERROR_TEXT[503]),
                },
            }
        },
        "/openapi.json": {
            "get": {
                "summary": "This document",
                "responses": {"200": json_content({"type": "object"}, "the OpenAPI document")},
            }
        },
    }


def _tools_paths(config: CrosstalkConfig) -> dict[str, Any]:
    body = {
        "type": "object",
        "required": ["tool"],
        "properties": {
            "tool": {
                "type": "string",
                "minLength": 1,
                "pattern": NOT_BLANK,
                "examples": [
                    "sessions_list",
                    "sessions_history",
                    "sessions_search",
                    "session_status",
                    "sessions_send",
                    "agents_list",
                    "subagents",
                    "sessions_yield",
                ],
            },
            "action": {"description": "merged into args when the tool declares `action`"},
            "args": {"description": "the tool's arguments; anything but an object means {}"},
            "sessionKey": {
                "type": "string",
                "maxLength": key_schema(config)["maxLength"],
                "pattern": f"^[{WS}]*$|[^:{WS}]",
                "description": "requester session; blank or `main` = the main session",
            },
            "dryRun": {"description": "accepted and ignored (reference [7])"},
        },
    }
    return {
        "/tools/invoke": {
            "post": {
                "summary": "Invoke a tool as the given session (reference [7])",
                "security": AUTH,
                "requestBody": {"required": True, **json_content(body, "invocation")},
                "responses": {
                    "200": ok_content({"result": {"type": "object"}}, "{ok: true, result}"),
                    **errors(
                        400,
                        401,
                        404,
                        408,
                        e400=ERROR_TEXT[400] + "; or {ok: false, error: {type: tool_error}}",
                        e404="{ok: false, error: {type: not_found}}: tool not available",
                    ),
                    "405": {
                        "description": "method not allowed",
                        "content": {"text/plain": {"schema": {"type": "string"}}},
                    },
                },
            }
        }
    }


def _cron_and_hook_paths() -> dict[str, Any]:
    from core.edge.http.http_approvals import OPENAPI_PATHS as approvals
    from core.edge.http.http_cron import OPENAPI_PATHS as cron
    from core.edge.http.http_hooks import OPENAPI_PATHS as hooks

    return _with_error_bodies({**cron, **hooks, **approvals})


def _console_paths(config: CrosstalkConfig) -> dict[str, Any]:
    from core.edge.http.openapi_console import console_paths

    return _with_error_bodies(console_paths(key_param(config)))


def _with_error_bodies(paths: dict[str, Any]) -> dict[str, Any]:
    """Every client error carries the one error body, and every operation documents the edge's
    own 400 and 408 (and 401 where it needs the token)."""
    for item in paths.values():
        for op in item.values():
            if not isinstance(op, dict) or "responses" not in op:
                continue
            responses = op["responses"]
            for code, resp in list(responses.items()):
                if code.isdigit() and int(code) >= 400 and "content" not in resp:
                    responses[code] = json_content(ERROR, resp.get("description", ""))
            extra = (400, 401, 408) if "security" in op else (400, 408)
            responses.update(
                {str(c): r for c, r in errors(*extra).items() if str(c) not in responses}
            )
    return paths


def _metrics_paths() -> dict[str, Any]:
    return {
        "/metrics": {
            "get": {
                "summary": (
                    "Prometheus metrics of this process (text format 0.0.4; every sample has a "
                    "`process` label)"
                ),
                "security": AUTH,
                "responses": {
                    "200": {
                        "description": "metrics",
                        "content": {"text/plain": {"schema": {"type": "string"}}},
                    },
                    **errors(401),
                },
            }
        }
    }


def openapi_spec(config: CrosstalkConfig | None = None) -> dict[str, Any]:
    config = config or CrosstalkConfig()
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Crosstalk gateway",
            "version": "0.1.0",
            "description": "Also served: the web chat page `/` and its WebSocket "
            "`/ws?token=...`, the owner console `/console` (D79: signed in with the token "
            "through a form; its session cookie then stands for the token on these routes), "
            "and MCP "
            "(streamable HTTP, bearer token) at `/mcp`, serving the session tools as the "
            "session of header `x-crosstalk-session-key`. "
            "Unknown paths answer 404 and unsupported methods 405, both with the "
            "error body `{error: {message, type}}`.",
        },
        "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
        "paths": {
            **_meta_paths(),
            **_tools_paths(config),
            **chat_paths(config),
            **session_paths(config),
            **pairing_paths(),
            **identity_paths(errors),
            **cluster_paths(),
            **openai_paths(config),
            **_metrics_paths(),
            **_cron_and_hook_paths(),
            **_console_paths(config),
        },
    }
