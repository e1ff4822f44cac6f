"""`GET /openapi.json`: a hand-kept OpenAPI 3.1 description of the HTTP API."""

from __future__ import annotations

from typing import Any

_ERR = {"type": "object", "properties": {"error": {"type": "object", "properties": {
    "message": {"type": "string"}, "type": {"type": "string"}, "code": {"type": "string"}}}}}
_AUTH: list[dict[str, list[str]]] = [{"bearer": []}]


def _json(schema: dict[str, Any], desc: str) -> dict[str, Any]:
    return {"description": desc, "content": {"application/json": {"schema": schema}}}


_CODE = [{"name": "channel", "in": "path", "required": True, "schema": {"type": "string"}},
         {"name": "code", "in": "path", "required": True, "schema": {"type": "string"}}]
_SETTLED = _json({"type": "object", "properties": {"ok": {"type": "boolean"},
                                                   "userId": {"type": "string"}}}, "settled")
_PAIRING: dict[str, Any] = {
    "/api/pairing": {"get": {
        "summary": "Pending pairing requests and approved senders (D11; ?channel=CH)",
        "security": _AUTH,
        "responses": {"200": _json({"type": "object", "properties": {
            "requests": {"type": "array", "items": {"type": "object"}},
            "approved": {"type": "array", "items": {"type": "object"}}}}, "pairing state"),
            "400": _json(_ERR, "unknown channel")}}},
    "/api/pairing/{channel}/{code}/approve": {"post": {
        "summary": "Approve a pending request; the sender joins the allowlist and is told once",
        "security": _AUTH, "parameters": _CODE,
        "responses": {"200": _SETTLED, "404": _json(_ERR, "no pending request with code")}}},
    "/api/pairing/{channel}/{code}/deny": {"post": {
        "summary": "Deny a pending request", "security": _AUTH, "parameters": _CODE,
        "responses": {"200": _SETTLED, "404": _json(_ERR, "no pending request with code")}}},
    "/api/pairing/{channel}/approved/{userId}": {"delete": {
        "summary": "Revoke an approved sender on every account of the channel",
        "security": _AUTH,
        "parameters": [_CODE[0], {"name": "userId", "in": "path", "required": True,
                                  "schema": {"type": "string"}}],
        "responses": {"200": _SETTLED, "404": _json(_ERR, "sender not approved")}}},
}


def _cron_and_hook_paths() -> dict[str, Any]:
    from core.gateway.http_cron import OPENAPI_PATHS as cron
    from core.gateway.http_hooks import OPENAPI_PATHS as hooks

    return {**cron, **hooks}


def openapi_spec() -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {"title": "Crosstalk gateway", "version": "0.1.0"},
        "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
        "paths": {
            "/healthz": {"get": {"summary": "Liveness and channel states",
                                 "responses": {"200": {"description": "healthy"},
                                               "503": {"description": "a channel failed"}}}},
            "/tools/invoke": {"post": {
                "summary": "Invoke a tool as the given session (reference [7])",
                "security": _AUTH,
                "requestBody": _json({"type": "object", "required": ["tool"], "properties": {
                    "tool": {"type": "string"}, "action": {"type": "string"},
                    "args": {"type": "object"}, "sessionKey": {"type": "string"},
                    "dryRun": {"type": "boolean"}}}, "invocation"),
                "responses": {"200": {"description": "{ok:true, result}"},
                              "400": _json(_ERR, "invalid request or tool error"),
                              "401": _json(_ERR, "unauthorized"),
                              "404": {"description": "tool not available"},
                              "405": {"description": "method not allowed"}}}},
            "/v1/chat/completions": {"post": {
                "summary": "One agent turn in the session of header x-crosstalk-session-key",
                "security": _AUTH,
                "parameters": [{"name": "x-crosstalk-session-key", "in": "header",
                                "schema": {"type": "string"}}],
                "requestBody": _json({"type": "object", "required": ["messages"], "properties": {
                    "model": {"type": "string"}, "messages": {"type": "array"},
                    "user": {"type": "string"}, "stream": {"type": "boolean"},
                    "stream_options": {"type": "object"}}}, "chat"),
                "responses": {"200": {"description": "chat.completion or SSE chunks"},
                              "400": _json(_ERR, "invalid request"),
                              "403": _json(_ERR, "send blocked by session policy"),
                              "404": _json(_ERR, "model not found"),
                              "502": _json(_ERR, "the run failed")}}},
            "/v1/models": {"get": {
                "summary": "The agents as OpenAI models: crosstalk and crosstalk/<agentId> (D14)",
                "security": _AUTH, "responses": {"200": {"description": "{object:list, data}"},
                                                 "401": _json(_ERR, "unauthorized")}}},
            "/v1/models/{id}": {"get": {
                "summary": "One model; the id may contain '/' (plain or %2F-encoded)",
                "security": _AUTH,
                "responses": {"200": {"description": "model object"},
                              "404": _json(_ERR, "model not found (code model_not_found)")}}},
            "/v1/responses": {"post": {
                "summary": "OpenAI Responses API: one agent turn (plain or SSE events)",
                "security": _AUTH,
                "parameters": [{"name": "x-crosstalk-session-key", "in": "header",
                                "schema": {"type": "string"}}],
                "requestBody": _json({"type": "object", "required": ["input"], "properties": {
                    "model": {"type": "string"}, "input": {}, "instructions": {"type": "string"},
                    "user": {"type": "string"}, "stream": {"type": "boolean"}}}, "response"),
                "responses": {"200": {"description": "response object or SSE events"},
                              "400": _json(_ERR, "invalid request"),
                              "403": _json(_ERR, "send blocked by session policy"),
                              "404": _json(_ERR, "model not found"),
                              "502": _json(_ERR, "the run failed")}}},
            "/api/sessions/{key}": {
                "get": {"summary": "One session entry", "security": _AUTH,
                        "responses": {"200": {"description": "entry"},
                                      "404": _json(_ERR, "unknown session")}},
                "patch": {"summary": "sessions.patch: sendPolicy allow|deny|null, label, model",
                          "security": _AUTH,
                          "responses": {"200": {"description": "updated entry"},
                                        "400": _json(_ERR, "invalid params"),
                                        "404": _json(_ERR, "unknown session")}}},
            "/api/deliveries": {"get": {
                "summary": "Delivery log, newest first (?session=KEY&outcome=X&limit=N)",
                "security": _AUTH, "responses": {"200": {"description": "deliveries"}}}},
            **_PAIRING,
            "/metrics": {"get": {
                "summary": "Prometheus metrics of this process (text format 0.0.4; every "
                           "sample has a `process` label)",
                "security": _AUTH,
                "responses": {"200": {"description": "metrics", "content": {
                    "text/plain": {"schema": {"type": "string"}}}},
                              "401": _json(_ERR, "unauthorized")}}},
            "/mcp": {"post": {
                "summary": "MCP (streamable HTTP, JSON responses): the session tools, acting as "
                           "the session of header x-crosstalk-session-key (default main)",
                "security": _AUTH,
                "parameters": [{"name": "x-crosstalk-session-key", "in": "header",
                                "schema": {"type": "string"}}],
                "responses": {"200": {"description": "JSON-RPC response"},
                              "401": _json(_ERR, "unauthorized")}}},
            "/ws": {"get": {"summary": "Web chat WebSocket (?token=...)"}},
            **_cron_and_hook_paths(),
        },
    }
