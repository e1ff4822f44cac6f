"""`POST /tools/invoke` with the reference's exact shapes and status codes (reference [7], D9)."""

from __future__ import annotations

from typing import Any, TypeVar

from aiohttp import web
from pydantic import BaseModel

from core.edge.http.appkeys import RUNTIME, SECRET
from core.edge.http.auth import is_authorized, unauthorized
from core.edge.http.edge import HttpError, error_response, read_json, read_model
from core.features.tools.availability import tool_names_for
from core.features.tools.registry import tool_result
from core.model.errors import ToolError
from core.model.keys import agent_id_of


def _bad_request(message: str) -> web.Response:
    return error_response(400, message)


async def read_json_body(request: web.Request, limit: int) -> dict[str, Any] | web.Response:
    """`edge.read_json` as a value (kept for callers that return the 400 themselves).

    The limit is enforced once, by the edge middleware (`gateway.maxBodyBytes`).
    """
    try:
        return await read_json(request)
    except HttpError as exc:
        return exc.response()


M = TypeVar("M", bound=BaseModel)


async def authorized_model(
    request: web.Request, model: type[M], prefix: str = ""
) -> tuple[M, dict[str, Any]] | web.Response:
    """Authenticate, then `edge.read_model`: the model and the raw body, or the 401/400."""
    if not is_authorized(request, request.app[SECRET]):
        return unauthorized()
    try:
        return await read_model(request, model, prefix)
    except HttpError as exc:
        return exc.response()


async def tools_invoke(request: web.Request) -> web.StreamResponse:
    if request.method != "POST":
        return web.Response(
            status=405,
            text="Method Not Allowed",
            headers={"Allow": "POST"},
            content_type="text/plain",
        )
    rt = request.app[RUNTIME]
    if not is_authorized(request, request.app[SECRET]):
        return unauthorized()
    body = await read_json(request)
    tool = body.get("tool")
    if not isinstance(tool, str) or not tool.strip():
        return _bad_request("tools.invoke requires body.tool")
    tool = tool.strip()
    raw_args = body.get("args")
    args: dict[str, Any] = raw_args if isinstance(raw_args, dict) else {}
    raw_key = body.get("sessionKey", "")
    if not isinstance(raw_key, str):
        return _bad_request("body.sessionKey must be a string")
    raw_key = raw_key.strip()
    key = rt.keys.main_session_key() if raw_key in ("", "main") else rt.keys.canonical(raw_key)
    spec = rt.tools.get(tool)
    if spec is None or tool not in tool_names_for(rt.config, rt.tools, key, agent_id_of(key)):
        return web.json_response(
            {"ok": False, "error": {"type": "not_found", "message": f"Tool not available: {tool}"}},
            status=404,
        )
    action = body.get("action")
    if (
        isinstance(action, str)
        and "action" not in args
        and "action" in spec.json_schema().get("properties", {})
    ):
        args = {**args, "action": action}
    entry = await rt.services.ensure_session(key)
    origin = None
    channel = request.headers.get("x-crosstalk-message-channel")
    if channel:
        from core.model.delivery_context import normalize_delivery_context

        origin = normalize_delivery_context(
            {"channel": channel, "accountId": request.headers.get("x-crosstalk-account-id")}
        )
    ctx = rt.services.context_for(entry, via="http", origin=origin)
    if origin is None:
        from dataclasses import replace

        ctx = replace(ctx, origin=None)
    from core.edge.http import idempotency  # D16: a retried call never runs the tool twice

    try:
        claim = idempotency.claim_for(request, "tools.invoke")
    except idempotency.BadKey as exc:
        return idempotency.bad_key(exc)
    if claim is not None:
        from core.store.inbound import DuplicateInbound

        try:
            await rt.store.claim_only((claim,), session_key=key, run_id=idempotency.BOOT_ID)
        except DuplicateInbound:
            return await idempotency.replay(rt, claim) or idempotency.conflict()
    try:
        payload = await rt.tools.invoke(rt.tool_env, tool, args, ctx)
    except ToolError as exc:
        failed = {"ok": False, "error": {"type": "tool_error", "message": str(exc)}}
        await idempotency.remember(rt, claim, 400, failed)
        return web.json_response(failed, status=400)
    body = {"ok": True, "result": tool_result(payload)}
    await idempotency.remember(rt, claim, 200, body)
    return web.json_response(body)
