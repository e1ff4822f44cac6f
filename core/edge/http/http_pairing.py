"""Pairing API (D11, bearer token): list requests and approvals; approve, deny, revoke."""

from __future__ import annotations

from aiohttp import web

from core.edge.http.appkeys import RUNTIME, SECRET
from core.edge.http.auth import is_authorized, unauthorized
from core.features.access.policy import guarded_channels


def _error(status: int, message: str, type_: str) -> web.Response:
    return web.json_response({"error": {"message": message, "type": type_}}, status=status)


def _channel(request: web.Request) -> str | web.Response:
    channel = request.match_info["channel"].strip().lower()
    if channel not in guarded_channels():
        return _error(
            404,
            f"unknown channel: {channel} (pairing exists on {', '.join(guarded_channels())})",
            "not_found",
        )
    return channel


async def list_pairing(request: web.Request) -> web.Response:
    if not is_authorized(request, request.app[SECRET]):
        return unauthorized()
    pairing = request.app[RUNTIME].access.pairing
    raw = request.query.get("channel")
    channel = None if raw in (None, "") else raw.strip().lower()  # "%1C" is no channel at all
    if channel is not None and channel not in guarded_channels():
        return _error(400, f"unknown channel: {channel}", "invalid_request_error")
    return web.json_response(
        {
            "requests": [r.to_wire() for r in await pairing.pending(channel)],
            "approved": [a.to_wire() for a in await pairing.approved(channel)],
        }
    )


async def _settle(request: web.Request, approve: bool) -> web.Response:
    if not is_authorized(request, request.app[SECRET]):
        return unauthorized()
    channel = _channel(request)
    if isinstance(channel, web.Response):
        return channel
    pairing = request.app[RUNTIME].access.pairing
    code = request.match_info["code"].strip().upper()
    req = await (pairing.approve(code, channel) if approve else pairing.deny(code, channel))
    if req is None:
        return _error(
            404, f"No pending pairing request with code {code} on {channel}.", "not_found"
        )
    return web.json_response({"ok": True, "userId": req.user_id})


async def approve(request: web.Request) -> web.Response:
    return await _settle(request, True)


async def deny(request: web.Request) -> web.Response:
    return await _settle(request, False)


async def revoke(request: web.Request) -> web.Response:
    if not is_authorized(request, request.app[SECRET]):
        return unauthorized()
    channel = _channel(request)
    if isinstance(channel, web.Response):
        return channel
    user_id = request.match_info["userId"].strip()
    if not await request.app[RUNTIME].access.pairing.revoke(channel, user_id):
        return _error(404, f"{user_id} is not approved on {channel}.", "not_found")
    return web.json_response({"ok": True, "userId": user_id})


def routes() -> list[web.RouteDef]:
    return [
        web.get("/api/pairing", list_pairing),
        web.post("/api/pairing/{channel}/{code}/approve", approve),
        web.post("/api/pairing/{channel}/{code}/deny", deny),
        web.delete("/api/pairing/{channel}/approved/{userId}", revoke),
    ]
