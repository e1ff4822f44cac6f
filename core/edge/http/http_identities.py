"""Linked identities over HTTP (D65, bearer token): the list, and unlinking one account."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from core.edge.http.appkeys import RUNTIME, SECRET
from core.edge.http.auth import is_authorized, unauthorized

_AUTH: list[dict[str, list[str]]] = [{"bearer": []}]


async def list_identities(request: web.Request) -> web.Response:
    if not is_authorized(request, request.app[SECRET]):
        return unauthorized()
    return web.json_response({"persons": await request.app[RUNTIME].identities.persons()})


async def unlink(request: web.Request) -> web.Response:
    if not is_authorized(request, request.app[SECRET]):
        return unauthorized()
    channel = request.match_info["channel"].strip().lower()
    user_id = request.match_info["userId"].strip()
    if not await request.app[RUNTIME].identities.unlink(channel, user_id):
        # worded like the API's other absent things (tests/e2e/test_readme_commands.py)
        body = {
            "message": f"Unknown identity: {channel}:{user_id} is not linked.",
            "type": "not_found",
        }
        return web.json_response({"error": body}, status=404)
    return web.json_response({"ok": True, "channel": channel, "userId": user_id})


def routes() -> list[web.RouteDef]:
    return [
        web.get("/api/identities", list_identities),
        web.delete("/api/identities/{channel}/{userId}", unlink),
    ]


def identity_paths(error: Any) -> dict[str, Any]:
    """The OpenAPI paths; `error(*codes, e404=...)` builds the error responses."""
    identity = {
        "type": "object",
        "properties": {
            "channel": {"type": "string"},
            "accountId": {"type": "string"},
            "userId": {"type": "string"},
            "linkedAt": {"type": ["integer", "null"]},
        },
    }
    persons = {
        "type": "object",
        "properties": {
            "persons": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "personId": {"type": "string"},
                        "identities": {"type": "array", "items": identity},
                    },
                },
            }
        },
    }
    text = {"type": "string"}
    return {
        "/api/identities": {
            "get": {
                "summary": "Linked identities: each person and its accounts (D65)",
                "security": _AUTH,
                "responses": {
                    "200": {
                        "description": "persons",
                        "content": {"application/json": {"schema": persons}},
                    },
                    **error(401, 408),
                },
            }
        },
        "/api/identities/{channel}/{userId}": {
            "delete": {
                "summary": "Take one account out of its person (D65)",
                "security": _AUTH,
                "parameters": [
                    {"name": "channel", "in": "path", "required": True, "schema": text},
                    {"name": "userId", "in": "path", "required": True, "schema": text},
                ],
                "responses": {
                    "200": {
                        "description": "unlinked",
                        "content": {"application/json": {"schema": {"type": "object"}}},
                    },
                    **error(401, 404, 408, e404="account not linked"),
                },
            }
        },
    }
