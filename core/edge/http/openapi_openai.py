"""The OpenAPI paths of the OpenAI-compatible routes (`/v1/chat/completions`, `/v1/models`,
`/v1/responses`), apart from `core.edge.http.openapi` to keep each module small."""

from __future__ import annotations

from typing import Any

from core.config import CrosstalkConfig
from core.edge.http.openapi_shapes import AUTH, NOT_BLANK, errors, json_content, key_schema


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


def chat_paths(config: CrosstalkConfig) -> dict[str, Any]:
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
                "security": AUTH,
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


def openai_paths(config: CrosstalkConfig) -> dict[str, Any]:
    """`/v1/models` and `/v1/responses` (D14); `/v1/chat/completions` is in `chat_paths`."""
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
            "previous_response_id": {
                "type": ["string", "null"],
                "description": "continue the session of that response (D194)",
            },
            "stream": {"type": "boolean"},
        },
    }
    return {
        "/v1/models": {
            "get": {
                "summary": "The agents as OpenAI models: crosstalk and crosstalk/<agentId> (D14)",
                "security": AUTH,
                "responses": {
                    "200": json_content({"type": "object"}, "{object: list, data}"),
                    **errors(401),
                },
            }
        },
        "/v1/models/{id}": {
            "get": {
                "summary": "One model; the id may contain '/' (plain or %2F-encoded)",
                "security": AUTH,
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
                "security": AUTH,
                "parameters": [session],
                "requestBody": {"required": True, **json_content(body, "response")},
                "responses": {
                    "200": {"description": "response object or SSE events"},
                    **errors(
                        400,
                        401,
                        403,
                        404,
                        408,
                        429,
                        502,
                        e404="model or previous response not found",
                    ),
                },
            }
        },
    }
