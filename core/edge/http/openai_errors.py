"""OpenAI's error shape for every `/v1/*` response: `{error: {message, type, code?}}` (D14).

All `/v1` error bodies are built by :func:`openai_error`; the middleware turns aiohttp's own
errors on `/v1/*` (unknown route, wrong method, body too large) and unexpected exceptions into
the same shape, so OpenAI clients always get an error they can parse.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

log = logging.getLogger(__name__)

_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "invalid_request_error",
    405: "invalid_request_error",
    413: "invalid_request_error",
    429: "rate_limit_error",
}


def error_body(message: str, type_: str, code: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"message": message, "type": type_}
    if code is not None:
        body["code"] = code
    return {"error": body}


def openai_error(
    status: int, message: str, type_: str | None = None, code: str | None = None
) -> web.Response:
    """One `/v1` error response; `type_` defaults to OpenAI's type for the status."""
    type_ = type_ or _TYPES.get(status, "server_error")
    return web.json_response(error_body(message, type_, code), status=status)


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@web.middleware
async def openai_error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    if not request.path.startswith("/v1/"):
        return await handler(request)
    try:
        return await handler(request)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        message = {
            404: f"Unknown route: {request.method} {request.path}",
            405: f"Method not allowed: {request.method} {request.path}",
            413: "payload too large",
        }.get(exc.status, exc.reason)
        resp = openai_error(exc.status, message)
        if exc.status == 405 and "Allow" in exc.headers:
            resp.headers["Allow"] = exc.headers["Allow"]
        return resp
    except Exception:
        log.exception("unhandled error on %s %s", request.method, request.path)
        return openai_error(500, "internal error", "server_error")
