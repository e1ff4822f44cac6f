"""The HTTP edge: one body reader and one error mapping for every route (D12).

Every route of the gateway (and every route other modules add to it) runs behind the
middleware that `install_edge(app, ...)` adds, which

* reads any request body completely before the handler runs, within `gateway.maxBodyBytes`
  (over it: `400 payload too large`, reference [7]) and `gateway.bodyTimeoutSeconds` (a body
  that has not fully arrived by then: `408`), so no half-sent request is held forever and no
  handler sees half a body;
* turns `HttpError` (raised by `read_json` / `read_model` or by a handler) and
  `InvalidSessionKey` (raised by the key module) into `400`-class answers with the one error
  shape `{error: {message, type}}`;
* gives aiohttp's own 404/405/413 answers the same JSON shape, and answers anything
  unexpected with a JSON 500 whose detail stays in the log.

Handlers read their body with `read_json(request)` (a JSON object) or
`read_model(request, Model)` (validated by pydantic). A new route needs nothing else:

    async def my_route(request: web.Request) -> web.Response:
        if not is_authorized(request, request.app[SECRET]):
            return unauthorized()
        body, raw = await read_model(request, MyBody)
        ...
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from itertools import accumulate
from typing import Any, TypeVar

from aiohttp import web
from pydantic import BaseModel, ValidationError

from core.model.errors import CrosstalkError
from core.model.keys import InvalidSessionKey
from core.model.text import clean_json
from core.model.validation import validation_message

log = logging.getLogger(__name__)

MAX_JSON_DEPTH = 64
"""Deeper JSON bodies are refused: no route needs them, and they exhaust the stack."""

JSON_TYPES = ("application/json",)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
M = TypeVar("M", bound=BaseModel)
_STARTED: web.RequestKey[bool] = web.RequestKey("crosstalk.edge.response_started", bool)


class HttpError(CrosstalkError):
    """A client error, answered as `{error: {message, type}}` with `status`."""

    def __init__(
        self,
        status: int,
        message: str,
        type_: str = "invalid_request_error",
        headers: Mapping[str, str] | None = None,
        *,
        close: bool = False,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type_
        self.headers = dict(headers or {})
        self.close = close
        """Close the connection after answering (the rest of the body is not worth reading)."""

    def response(self) -> web.Response:
        return error_response(self.status, self.message, self.type, self.headers)


def error_response(
    status: int,
    message: str,
    type_: str = "invalid_request_error",
    headers: Mapping[str, str] | None = None,
) -> web.Response:
    """The one error body of the HTTP API."""
    return web.json_response(
        {"error": {"message": message, "type": type_}}, status=status, headers=headers
    )


def payload_too_large() -> HttpError:
    return HttpError(400, "payload too large")


async def read_json(request: web.Request) -> dict[str, Any]:
    """The request body as a JSON object; an empty body is `{}` (reference [7]).

    Raises `HttpError(400)` for a non-JSON content type, invalid UTF-8 or JSON, nesting
    deeper than `MAX_JSON_DEPTH`, or a top level that is not an object.
    """
    raw = await request.read()  # already read within the limits by the middleware
    if not raw.strip():
        return {}
    ctype = request.headers.get("Content-Type")
    if ctype is None:
        raise HttpError(400, "Content-Type must be application/json (none given)")
    if request.content_type not in JSON_TYPES and not request.content_type.endswith("+json"):
        raise HttpError(400, f"Content-Type must be application/json, not {ctype[:100]}")
    charset = (request.charset or "utf-8").lower()
    if charset not in ("utf-8", "utf8"):
        raise HttpError(400, f"unsupported charset {charset[:40]} (JSON bodies are UTF-8)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise HttpError(400, "request body is not valid UTF-8") from None
    if _nesting(text) > MAX_JSON_DEPTH:
        raise HttpError(400, f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
    try:
        body = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise HttpError(400, f"invalid JSON: {exc}") from None
    if not isinstance(body, dict):
        raise HttpError(400, "request body must be a JSON object")
    cleaned: dict[str, Any] = clean_json(body)  # D12: every text of every JSON body, once
    return cleaned


def _nesting(text: str) -> int:
    """Upper bound of the bracket depth (brackets inside strings count too: refuses early).

    Scans at C speed (regex, accumulate); the exact, string-aware count runs only when this
    bound is over the limit.
    """
    brackets = _NOT_BRACKET.sub("", text)
    if len(brackets) <= MAX_JSON_DEPTH:
        return len(brackets)
    deepest = max(accumulate(map(_STEP.__getitem__, brackets)))
    return _exact_nesting(text) if deepest > MAX_JSON_DEPTH else deepest


def _exact_nesting(text: str) -> int:
    """Bracket depth outside JSON strings (only run when the quick bound is exceeded)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


async def read_model(
    request: web.Request, model: type[M], prefix: str = ""
) -> tuple[M, dict[str, Any]]:
    """The JSON body validated into `model`, plus the raw object (to tell absent from null).

    Raises `HttpError(400)` with `<prefix><dotted.path>: <reason>` when validation fails.
    """
    body = await read_json(request)
    try:
        return model.model_validate(body), body
    except ValidationError as exc:
        raise HttpError(400, f"{prefix}{validation_message(exc)}") from None


async def _read_body(request: web.Request, limit: int, timeout: float) -> None:
    """Read the whole body into aiohttp's cache (`request.read()`), within both limits."""
    if request.content_length is not None and request.content_length > limit:
        raise payload_too_large()
    try:
        async with asyncio.timeout(timeout):
            await request.read()
    except TimeoutError:
        raise HttpError(
            408, f"request body not received within {timeout:g} s", "request_timeout", close=True
        ) from None
    except web.HTTPRequestEntityTooLarge:
        raise payload_too_large() from None
    except web.RequestPayloadError as exc:  # e.g. a Content-Encoding that does not decode
        reason = " ".join(str(exc).split())
        raise HttpError(400, f"request body could not be read: {reason}", close=True) from None


_STATUS_TYPES = {404: "not_found", 405: "method_not_allowed", 413: "invalid_request_error"}


def _from_http_exception(exc: web.HTTPException) -> web.Response:
    headers = {k: v for k, v in exc.headers.items() if k.lower() == "allow"}
    if exc.status == 413:
        return payload_too_large().response()
    return error_response(
        exc.status, exc.reason, _STATUS_TYPES.get(exc.status, "http_error"), headers
    )


def edge_middleware(max_body_bytes: int, body_timeout: float) -> Any:
    """The middleware described in the module docstring, bound to the configured limits."""

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            if request.body_exists:
                await _read_body(request, max_body_bytes, body_timeout)
            return await handler(request)
        except HttpError as exc:
            resp = exc.response()
            if exc.close:  # answer, then close: no lingering for the rest of the body
                await resp.prepare(request)
                await resp.write_eof()
                request.protocol.force_close()
            return resp
        except InvalidSessionKey as exc:
            return error_response(400, str(exc))
        except web.HTTPException as exc:
            if exc.status < 400:
                raise
            return _from_http_exception(exc)
        except (ConnectionResetError, asyncio.CancelledError):
            raise
        except Exception:
            if request.get(_STARTED):  # a stream or WebSocket is under way: nothing to answer
                raise
            log.exception("%s %s failed", request.method, request.path)
            return error_response(
                500, "internal error (details are in the gateway log)", "internal_error"
            )

    return middleware


async def _mark_started(request: web.Request, response: web.StreamResponse) -> None:
    request[_STARTED] = True


def install_edge(app: web.Application, max_body_bytes: int, body_timeout: float) -> None:
    """Put every route of `app` behind the edge (call before the app starts)."""
    app.middlewares.append(edge_middleware(max_body_bytes, body_timeout))
    app.on_response_prepare.append(_mark_started)
