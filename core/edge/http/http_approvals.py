"""Approvals API (D72, bearer token): the tool calls waiting for an owner's yes, and decisions.

The console's access page (docs/CONSOLE.md) reads `GET /api/approvals` and posts the decisions;
`crosstalk approvals` does the same from a terminal. A decision here is the same decision as a
button press or `/approve ID` in a chat: the first one wins, every later one gets a 409.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from core.edge.http.appkeys import RUNTIME, SECRET
from core.edge.http.auth import is_authorized, unauthorized

DECIDED_BY = "the owner"
"""Who decided, in the edited request, when the decision came over HTTP or the CLI (D121)."""


def _error(status: int, message: str, type_: str) -> web.Response:
    return web.json_response({"error": {"message": message, "type": type_}}, status=status)


async def list_approvals(request: web.Request) -> web.Response:
    if not is_authorized(request, request.app[SECRET]):
        return unauthorized()
    pending = await request.app[RUNTIME].approvals.pending()
    return web.json_response({"approvals": [a.to_wire() for a in pending]})


async def _decide(request: web.Request, verdict: str) -> web.Response:
    if not is_authorized(request, request.app[SECRET]):
        return unauthorized()
    approval_id = request.match_info["id"]
    result = await request.app[RUNTIME].approvals.decide(
        approval_id, "approved" if verdict == "approve" else "denied", by=DECIDED_BY
    )
    if result.approval is None:
        unknown = (result.error or "").startswith("No pending approval")
        return _error(
            404 if unknown else 409,
            result.error or "not decided",
            "not_found" if unknown else "conflict",
        )
    return web.json_response({"ok": True, "approval": result.approval.to_wire()})


async def approve(request: web.Request) -> web.Response:
    return await _decide(request, "approve")


async def deny(request: web.Request) -> web.Response:
    return await _decide(request, "deny")


def routes() -> list[web.RouteDef]:
    return [
        web.get("/api/approvals", list_approvals),
        web.post("/api/approvals/{id}/approve", approve),
        web.post("/api/approvals/{id}/deny", deny),
    ]


_AUTH: list[dict[str, list[str]]] = [{"bearer": []}]
_ID = [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}]
_APPROVAL: dict[str, Any] = {
    "type": "object",
    "required": ["id", "tool", "arguments", "sessionKey", "requester", "createdAt", "expiresAt"],
    "properties": {
        "id": {"type": "string"},
        "kind": {"type": "string"},
        "tool": {"type": "string"},
        "arguments": {"type": "object"},
        "sessionKey": {"type": "string"},
        "requester": {"type": "object"},
        "createdAt": {"type": "integer"},
        "expiresAt": {"type": "integer"},
        "status": {"type": "string"},
        "decidedAt": {"type": ["integer", "null"]},
        "decidedBy": {"type": ["string", "null"]},
    },
}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _decision(summary: str) -> dict[str, Any]:
    return {
        "post": {
            "summary": summary,
            "security": _AUTH,
            "parameters": _ID,
            "responses": {
                "200": _json(
                    {"type": "object", "properties": {"ok": {}, "approval": _APPROVAL}},
                    "the decided approval",
                ),
                "404": {"description": "no approval with this id"},
                "409": {"description": "already decided (approved, denied or expired)"},
            },
        }
    }


OPENAPI_PATHS: dict[str, Any] = {
    "/api/approvals": {
        "get": {
            "summary": "Tool calls waiting for an owner's yes (D72), oldest first",
            "security": _AUTH,
            "responses": {
                "200": _json(
                    {
                        "type": "object",
                        "required": ["approvals"],
                        "properties": {"approvals": {"type": "array", "items": _APPROVAL}},
                    },
                    "pending approvals",
                ),
            },
        }
    },
    "/api/approvals/{id}/approve": _decision(
        "Approve: the tool runs exactly once and its run goes on to its reply"
    ),
    "/api/approvals/{id}/deny": _decision("Deny: the model gets {status: denied} and goes on"),
}
