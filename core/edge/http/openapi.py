"""`GET /openapi.json`: the OpenAPI 3.1 description of the HTTP API, built here and only here.

Every status a route can answer is declared (the schemathesis run in the test suite checks
responses against this document), including the edge's own answers (`core.edge.http.edge`):
400 for bad bodies and keys, 401, 404/405 as JSON, 408 for a body that did not arrive.
A module that adds routes adds one `_<area>_paths(config)` function below and one line in
`openapi_spec`; the helpers (`json_content`, `errors`, `KEY_SCHEMA`...) keep the shapes equal.
"""

from __future__ import annotations

import re
from typing import Any

from core.config import CrosstalkConfig
from core.edge.http.http_api import OUTCOMES
from core.edge.http.http_identities import identity_paths
from core.model.keys import MAX_KEY_LENGTH

ERROR = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["message", "type"],
            "properties": {"message": {"type": "string"}, "type": {"type": "string"}},
        }
    },
}
"""The one error body (`core.edge.http.edge.error_response`); tool errors add `ok: false`."""

_ERROR_TEXT = {
    400: "invalid request: malformed, too deeply nested or mistyped JSON, a bad content type, "
    "payload too large, or an invalid session key (message starts `invalid session key`)",
    401: "missing or wrong bearer token",
    403: "send blocked by session policy",
    404: "not found",
    408: "the request body did not arrive within gateway.bodyTimeoutSeconds",
    409: "label already in use by another session",
    429: "an agent's or session's limit is reached (limits.perAgent, limits.perSession); the "
    "message is the refusal text, e.g. `⏳ Limit reached: turns per day (100/100). It resets at "
    "00:00 UTC.`",
    502: "the agent run failed (the model provider failed)",
    503: "a channel failed",
}
_AUTH: list[dict[str, list[str]]] = [{"bearer": []}]
WS = r"\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
"""What `str.strip()` removes (a wider class than ECMA's `\\s`): the server trims with it."""
NOT_BLANK = f"[^{WS}]"


def json_content(schema: dict[str, Any], desc: str) -> dict[str, Any]:
    return {"description": desc, "content": {"application/json": {"schema": schema}}}


def errors(*codes: int, **texts: str) -> dict[str, Any]:
    """Error responses with the one error body; `texts` (`e404="..."`) override descriptions."""
    return {str(c): json_content(ERROR, texts.get(f"e{c}", _ERROR_TEXT[c])) for c in codes}


def key_schema(config: CrosstalkConfig) -> dict[str, Any]:
    """A session key the gateway accepts: not blank, not only `:` separators, and short enough
    that its canonical form `agent:<default agent>:<key>` stays within 256 characters (D12)."""
    prefix = len(f"agent:{config.default_agent_id()}:")
    return {
        "type": "string",
        "minLength": 1,
        "maxLength": MAX_KEY_LENGTH - prefix,
        "pattern": f"[^:{WS}]",
    }


def _model_schema(config: CrosstalkConfig) -> dict[str, Any]:
    """`provider/model` for a configured provider (one of its listed models, if it lists any)."""
    choices: list[dict[str, Any]] = [{"type": "null"}]
    for name, provider in sorted(config.models.providers.items()):
        if provider.models:
            choices.append({"enum": [f"{name}/{m.id}" for m in provider.models]})
        else:
            choices.append({"type": "string", "pattern": rf"^{re.escape(name)}/[\s\S]+$"})
    return {"anyOf": choices}


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
                    "503": json_content(health, _ERROR_TEXT[503]),
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
    ok = {
        "type": "object",
        "required": ["ok", "result"],
        "properties": {"ok": {"const": True}, "result": {"type": "object"}},
    }
    return {
        "/tools/invoke": {
            "post": {
                "summary": "Invoke a tool as the given session (reference [7])",
                "security": _AUTH,
                "requestBody": {"required": True, **json_content(body, "invocation")},
                "responses": {
                    "200": json_content(ok, "{ok: true, result}"),
                    **errors(
                        400,
                        401,
                        404,
                        408,
                        e400=_ERROR_TEXT[400] + "; or {ok: false, error: {type: tool_error}}",
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


def _session_header(config: CrosstalkConfig) -> dict[str, Any]:
    return {
        "name": "x-crosstalk-session-key",
        "in": "header",
        "required": False,
        "schema": {
            "type": "string",
            "maxLength": key_schema(config)["maxLength"],
            "pattern": r"^$|^(?:[!-~][ -~]*)?[!-9;-~](?:[ -~]*[!-~])?$",
        },
        "description": "printable ASCII; absent or blank = the main session",
    }


def _chat_paths(config: CrosstalkConfig) -> dict[str, Any]:
    part = {
        "type": "object",
        "required": ["type"],
        "properties": {"type": {"type": "string"}, "text": {"type": "string"}},
        "if": {"properties": {"type": {"const": "text"}}},
        "then": {"required": ["text"]},
    }
    message = {
        "type": "object",
        "required": ["role"],
        "properties": {
            "role": {"type": "string"},
            "content": {
                "anyOf": [{"type": "string"}, {"type": "array", "items": part}, {"type": "null"}]
            },
        },
    }
    text_part = {
        "type": "object",
        "required": ["type", "text"],
        "properties": {"type": {"const": "text"}, "text": {"type": "string", "pattern": NOT_BLANK}},
    }
    user_text = {
        "type": "object",
        "required": ["role", "content"],
        "properties": {
            "role": {"const": "user"},
            "content": {
                "anyOf": [
                    {"type": "string", "pattern": NOT_BLANK},
                    {"type": "array", "items": part, "contains": text_part},
                ]
            },
        },
    }
    body = {
        "type": "object",
        "required": ["messages"],
        "properties": {
            "model": {"type": ["string", "null"]},
            "messages": {
                "type": "array",
                "items": message,
                "contains": user_text,
                "description": "the last user message with text is the new input",
            },
            "stream": {"type": "boolean"},
            "user": {"type": ["string", "null"]},
            "stream_options": {"type": ["object", "null"]},
        },
    }
    return {
        "/v1/chat/completions": {
            "post": {
                "summary": "One agent turn in the session of header x-crosstalk-session-key",
                "security": _AUTH,
                "parameters": [_session_header(config)],
                "requestBody": {"required": True, **json_content(body, "chat")},
                "responses": {
                    "200": {
                        "description": "chat.completion, or SSE chunks when stream is true",
                        "content": {
                            "application/json": {"schema": {"type": "object"}},
                            "text/event-stream": {
                                "schema": {
                                    "type": "object",
                                    "required": ["data"],
                                    "properties": {"data": {"type": "string"}},
                                }
                            },
                        },
                    },
                    **errors(400, 401, 403, 404, 408, 429, 502, e404="model not found"),
                },
            }
        }
    }


def _key_param(config: CrosstalkConfig) -> dict[str, Any]:
    return {
        "name": "key",
        "in": "path",
        "required": True,
        "schema": {**key_schema(config), "examples": ["main"]},
        "description": "session key (`main` = the main session), percent-encoded",
    }


def _session_paths(config: CrosstalkConfig) -> dict[str, Any]:
    key = _key_param(config)
    patch = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "sendPolicy": {"enum": ["allow", "deny", None]},
            "label": {
                "anyOf": [
                    {"type": "null"},
                    {"type": "string", "minLength": 1, "maxLength": 64, "pattern": NOT_BLANK},
                ]
            },
            "model": _model_schema(config),
        },
    }
    entry = {
        "type": "object",
        "required": ["ok", "entry"],
        "properties": {"ok": {"const": True}, "entry": {"type": "object"}},
    }
    deliveries = {
        "type": "object",
        "required": ["ok", "deliveries"],
        "properties": {"ok": {"const": True}, "deliveries": {"type": "array"}},
    }
    return {
        "/api/sessions/{key}": {
            "parameters": [key],
            "get": {
                "summary": "One session entry",
                "security": _AUTH,
                "responses": {
                    "200": json_content(entry, "entry"),
                    **errors(400, 401, 404, 408, e404="unknown session"),
                },
            },
            "patch": {
                "summary": "sessions.patch: sendPolicy allow|deny|null, label, model",
                "security": _AUTH,
                "requestBody": {"required": False, **json_content(patch, "changes")},
                "responses": {
                    "200": json_content(entry, "updated entry"),
                    **errors(400, 401, 404, 408, 409, e404="unknown session"),
                },
            },
        },
        "/api/deliveries": {
            "get": {
                "summary": "Delivery log, newest first",
                "security": _AUTH,
                "parameters": [
                    {
                        "name": "session",
                        "in": "query",
                        "schema": {
                            "type": "string",
                            "maxLength": key_schema(config)["maxLength"],
                            "pattern": f"^$|[^:{WS}]",
                        },
                    },
                    {
                        "name": "outcome",
                        "in": "query",
                        "schema": {"enum": ["", *OUTCOMES]},
                        "description": "only deliveries with this outcome (blank = all)",
                    },
                    {
                        "name": "limit",
                        "in": "query",
                        "schema": {"type": "integer"},
                        "description": "clamped to 1..1000; default 100",
                    },
                    {
                        "name": "channel",
                        "in": "query",
                        "schema": {"type": "string", "pattern": "^$|^[a-z0-9][a-z0-9_-]{0,63}$"},
                        "description": "only deliveries to this channel (blank = all)",
                    },
                    {
                        "name": "since",
                        "in": "query",
                        "schema": {"type": "integer", "minimum": 0, "maximum": 999_999_999_999_999},
                        "description": "only deliveries created at or after (ms since the epoch)",
                    },
                ],
                "responses": {
                    "200": json_content(deliveries, "deliveries"),
                    **errors(400, 401, 408),
                },
            }
        },
    }


_SETTLED = json_content(
    {"type": "object", "properties": {"ok": {"type": "boolean"}, "userId": {"type": "string"}}},
    "settled",
)


def _cluster_paths() -> dict[str, Any]:
    lease = {
        "type": "object",
        "required": ["name", "acquiredAt", "expiresAt"],
        "properties": {
            "name": {"type": "string"},
            "acquiredAt": {"type": "integer"},
            "expiresAt": {"type": "integer"},
        },
    }
    process = {
        "type": "object",
        "required": ["id", "pid", "host", "startedAt", "heartbeatAt", "leases"],
        "properties": {
            "id": {"type": "string"},
            "pid": {"type": "integer"},
            "host": {"type": "string"},
            "startedAt": {"type": "integer"},
            "heartbeatAt": {"type": "integer"},
            "self": {"type": "boolean"},
            "leases": {"type": "array", "items": lease},
        },
    }
    body = {
        "type": "object",
        "required": ["processes"],
        "properties": {"processes": {"type": "array", "items": process}},
    }
    return {
        "/api/cluster": {
            "get": {
                "summary": "Live gateway processes and the leases each holds (D26, D27)",
                "security": _AUTH,
                "responses": {
                    "200": json_content(body, "live processes, oldest first"),
                    **errors(401, 408),
                },
            }
        }
    }


def _pairing_paths() -> dict[str, Any]:
    from core.features.access.policy import guarded_channels

    paired = list(guarded_channels())  # the public platforms and installed channels (D160)
    channel = {"name": "channel", "in": "path", "required": True, "schema": {"enum": paired}}
    code = [channel, {"name": "code", "in": "path", "required": True, "schema": {"type": "string"}}]
    return {
        "/api/pairing": {
            "get": {
                "summary": "Pending pairing requests and approved senders (D11; ?channel=CH)",
                "security": _AUTH,
                "parameters": [
                    {"name": "channel", "in": "query", "schema": {"enum": ["", *paired]}}
                ],
                "responses": {
                    "200": json_content(
                        {
                            "type": "object",
                            "properties": {
                                "requests": {"type": "array", "items": {"type": "object"}},
                                "approved": {"type": "array", "items": {"type": "object"}},
                            },
                        },
                        "pairing state",
                    ),
                    **errors(400, 401, 408, e400="unknown channel"),
                },
            }
        },
        "/api/pairing/{channel}/{code}/approve": {
            "post": {
                "summary": (
                    "Approve a pending request; the sender joins the allowlist and is told once"
                ),
                "security": _AUTH,
                "parameters": code,
                "responses": {
                    "200": _SETTLED,
                    **errors(400, 401, 404, 408, e404="no pending request with code"),
                },
            }
        },
        "/api/pairing/{channel}/{code}/deny": {
            "post": {
                "summary": "Deny a pending request",
                "security": _AUTH,
                "parameters": code,
                "responses": {
                    "200": _SETTLED,
                    **errors(400, 401, 404, 408, e404="no pending request with code"),
                },
            }
        },
        "/api/pairing/{channel}/approved/{userId}": {
            "delete": {
                "summary": "Revoke an approved sender on every account of the channel",
                "security": _AUTH,
                "parameters": [
                    channel,
                    {
                        "name": "userId",
                        "in": "path",
                        "required": True,
                        "schema": {"type": "string"},
                    },
                ],
                "responses": {
                    "200": _SETTLED,
                    **errors(400, 401, 404, 408, e404="sender not approved"),
                },
            }
        },
    }


def _cron_and_hook_paths() -> dict[str, Any]:
    from core.edge.http.http_approvals import OPENAPI_PATHS as approvals
    from core.edge.http.http_cron import OPENAPI_PATHS as cron
    from core.edge.http.http_hooks import OPENAPI_PATHS as hooks

    return _with_error_bodies({**cron, **hooks, **approvals})


def _console_paths(config: CrosstalkConfig) -> dict[str, Any]:
    from core.edge.http.openapi_console import console_paths

    return _with_error_bodies(console_paths(_key_param(config)))


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


def _openai_paths(config: CrosstalkConfig) -> dict[str, Any]:
    """`/v1/models` and `/v1/responses` (D14); `/v1/chat/completions` is in `_chat_paths`."""
    session = _session_header(config)
    user_item = {
        "type": "object",
        "required": ["role", "content"],
        "properties": {
            "type": {"const": "message"},
            "role": {"const": "user"},
            "content": {"type": "string", "pattern": NOT_BLANK},
        },
    }
    body = {
        "type": "object",
        "required": ["input"],
        "properties": {
            "model": {"type": ["string", "null"]},
            "input": {
                "anyOf": [
                    {"type": "string", "pattern": NOT_BLANK},
                    {"type": "array", "items": {"type": "object"}, "contains": user_item},
                ],
                "description": "the last user input item with text is the new message",
            },
            "instructions": {"type": ["string", "null"]},
            "user": {"type": ["string", "null"]},
            "stream": {"type": "boolean"},
        },
    }
    return {
        "/v1/models": {
            "get": {
                "summary": "The agents as OpenAI models: crosstalk and crosstalk/<agentId> (D14)",
                "security": _AUTH,
                "responses": {
                    "200": json_content({"type": "object"}, "{object: list, data}"),
                    **errors(401),
                },
            }
        },
        "/v1/models/{id}": {
            "get": {
                "summary": "One model; the id may contain '/' (plain or %2F-encoded)",
                "security": _AUTH,
                "parameters": [
                    {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
                ],
                "responses": {
                    "200": json_content({"type": "object"}, "model object"),
                    **errors(401, 404, e404="model not found (code model_not_found)"),
                },
            }
        },
        "/v1/responses": {
            "post": {
                "summary": "OpenAI Responses API: one agent turn (plain or SSE events)",
                "security": _AUTH,
                "parameters": [session],
                "requestBody": {"required": True, **json_content(body, "response")},
                "responses": {
                    "200": {"description": "response object or SSE events"},
                    **errors(400, 401, 403, 404, 408, 429, 502, e404="model not found"),
                },
            }
        },
    }


def _metrics_paths() -> dict[str, Any]:
    return {
        "/metrics": {
            "get": {
                "summary": (
                    "Prometheus metrics of this process (text format 0.0.4; every sample has a "
                    "`process` label)"
                ),
                "security": _AUTH,
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
            **_chat_paths(config),
            **_session_paths(config),
            **_pairing_paths(),
            **identity_paths(errors),
            **_cluster_paths(),
            **_openai_paths(config),
            **_metrics_paths(),
            **_cron_and_hook_paths(),
            **_console_paths(config),
        },
    }
