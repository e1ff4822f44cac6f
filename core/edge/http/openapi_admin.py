"""The OpenAPI paths of the owner's `/api` routes (sessions, deliveries, cluster, pairing),
apart from `core.edge.http.openapi` to keep each module small."""

from __future__ import annotations

import re
from typing import Any

from core.config import CrosstalkConfig
from core.edge.http.http_api import OUTCOMES
from core.edge.http.openapi_shapes import (
    AUTH,
    NOT_BLANK,
    WS,
    errors,
    json_content,
    key_param,
    key_schema,
    ok_content,
)


def _model_schema(config: CrosstalkConfig) -> dict[str, Any]:
    """`provider/model` for a configured provider (one of its listed models, if it lists any)."""
    choices: list[dict[str, Any]] = [{"type": "null"}]
    for name, provider in sorted(config.models.providers.items()):
        if provider.models:
            choices.append({"enum": [f"{name}/{m.id}" for m in provider.models]})
        else:
            choices.append({"type": "string", "pattern": rf"^{re.escape(name)}/[\s\S]+$"})
    return {"anyOf": choices}


def session_paths(config: CrosstalkConfig) -> dict[str, Any]:
    key = key_param(config)
    patch = {
        "type": "object",
        "additionalProperties": False,
        "minProperties": 1,
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
    entry = {"entry": {"type": "object"}}
    return {
        "/api/sessions/{key}": {
            "parameters": [key],
            "get": {
                "summary": "One session entry",
                "security": AUTH,
                "responses": {
                    "200": ok_content(entry, "entry"),
                    **errors(400, 401, 404, 408, e404="unknown session"),
                },
            },
            "patch": {
                "summary": "sessions.patch: sendPolicy allow|deny|null, label, model",
                "security": AUTH,
                "requestBody": {"required": True, **json_content(patch, "changes")},
                "responses": {
                    "200": ok_content(entry, "updated entry"),
                    **errors(400, 401, 404, 408, 409, e404="unknown session"),
                },
            },
        },
        "/api/deliveries": {
            "get": {
                "summary": "Delivery log, newest first",
                "security": AUTH,
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
                    "200": ok_content({"deliveries": {"type": "array"}}, "deliveries"),
                    **errors(400, 401, 408),
                },
            }
        },
    }


_SETTLED = json_content(
    {"type": "object", "properties": {"ok": {"type": "boolean"}, "userId": {"type": "string"}}},
    "settled",
)


def cluster_paths() -> dict[str, Any]:
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
                "security": AUTH,
                "responses": {
                    "200": json_content(body, "live processes, oldest first"),
                    **errors(401, 408),
                },
            }
        }
    }


def pairing_paths() -> dict[str, Any]:
    from core.features.access.policy import guarded_channels

    paired = list(guarded_channels())  # the public platforms and installed channels (D160)
    channel = {"name": "channel", "in": "path", "required": True, "schema": {"enum": paired}}
    code = [channel, {"name": "code", "in": "path", "required": True, "schema": {"type": "string"}}]
    return {
        "/api/pairing": {
            "get": {
                "summary": "Pending pairing requests and approved senders (D11; ?channel=CH)",
                "security": AUTH,
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
                "security": AUTH,
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
                "security": AUTH,
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
                "security": AUTH,
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
