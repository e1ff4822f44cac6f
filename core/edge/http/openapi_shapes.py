"""The shapes every OpenAPI path builder shares (the error body, session keys, bearer
security), apart from the builders so each route family can live in its own module."""

from __future__ import annotations

from typing import Any

from core.config import CrosstalkConfig
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

ERROR_TEXT = {
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
AUTH: list[dict[str, list[str]]] = [{"bearer": []}]
WS = r"\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
"""What `str.strip()` removes (a wider class than ECMA's `\\s`): the server trims with it."""
NOT_BLANK = f"[^{WS}]"


def json_content(schema: dict[str, Any], desc: str) -> dict[str, Any]:
    return {"description": desc, "content": {"application/json": {"schema": schema}}}


def ok_content(properties: dict[str, Any], desc: str) -> dict[str, Any]:
    """A success body: `{ok: true}` and the given properties, all required."""
    schema = {
        "type": "object",
        "required": ["ok", *properties],
        "properties": {"ok": {"const": True}, **properties},
    }
    return json_content(schema, desc)


def errors(*codes: int, **texts: str) -> dict[str, Any]:
    """Error responses with the one error body; `texts` (`e404="..."`) override descriptions."""
    return {str(c): json_content(ERROR, texts.get(f"e{c}", ERROR_TEXT[c])) for c in codes}


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


def key_param(config: CrosstalkConfig) -> dict[str, Any]:
    return {
        "name": "key",
        "in": "path",
        "required": True,
        "schema": {**key_schema(config), "examples": ["main"]},
        "description": "session key (`main` = the main session), percent-encoded",
    }
