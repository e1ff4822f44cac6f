"""`POST /hooks/<path>`: a webhook runs one agent turn in a `hook:` session (D15).

The mapping's token comes as `Authorization: Bearer` or `x-crosstalk-hook-token` and is compared
in constant time as UTF-8 bytes. The JSON body feeds the mapping's `messageTemplate` (Jinja2
sandbox). The reply is delivered through the outbound gate to the mapping's `deliver`; with
`?wait=true` the caller also gets it in the response.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
from typing import Any

from aiohttp import web

from core.config import secret_value
from core.config.schema_cron import HookMappingConfig
from core.edge.http.appkeys import RUNTIME
from core.edge.http.edge import HttpError, read_json
from core.features.cron.turns import TurnDone, deliver_target, finish_turn, start_turn
from core.model.hook_template import render_message
from core.model.keys import InvalidSessionKey
from core.model.text import clean_text
from core.runtime import Runtime

log = logging.getLogger(__name__)
_TRUE = ("1", "true", "yes")


def _error(status: int, message: str, type_: str = "invalid_request_error") -> web.Response:
    return web.json_response(
        {"ok": False, "error": {"message": message, "type": type_}}, status=status
    )


def _mapping(rt: Runtime, path: str) -> HookMappingConfig | None:
    wanted = path.strip("/")
    return next((m for m in rt.config.hooks.mappings if m.path == wanted), None)


def _token_ok(request: web.Request, mapping: HookMappingConfig) -> bool:
    header = request.headers.get("Authorization", "")
    given = (
        header[7:].strip()
        if header[:7].lower() == "bearer "
        else request.headers.get("x-crosstalk-hook-token", "").strip()
    )
    expected = secret_value(mapping.token) or ""
    return bool(given) and hmac.compare_digest(
        given.encode("utf-8", "surrogatepass"), expected.encode("utf-8")
    )


async def _body(request: web.Request, limit: int) -> Any:
    """The JSON body within `hooks.maxBodyBytes`; the edge has already read it (within the
    gateway's own limit and timeout) and checks its type, encoding and nesting."""
    if request.content_length is not None and request.content_length > limit:
        raise ValueError(f"payload too large (limit {limit} bytes)")
    if len(await request.read()) > limit:
        raise ValueError(f"payload too large (limit {limit} bytes)")
    try:
        return await read_json(request)
    except HttpError as exc:
        raise ValueError(exc.message) from None


def _session_key(rt: Runtime, mapping: HookMappingConfig) -> str:
    agent = mapping.agent_id or rt.config.default_agent_id()
    if mapping.session_key:
        return rt.keys.canonical(mapping.session_key, agent)
    return rt.keys.hook_key(agent)


async def hook(request: web.Request) -> web.Response:
    rt = request.app[RUNTIME]
    mapping = _mapping(rt, request.match_info["path"])
    if mapping is None:
        # which paths exist is told only to a caller holding some hook's token: without one,
        # an unknown path is as unauthorized as a known one
        if not any([_token_ok(request, m) for m in rt.config.hooks.mappings]):
            return _error(401, "Unauthorized", "unauthorized")
        return _error(404, f"no hook at /hooks/{request.match_info['path']}", "not_found")
    if not _token_ok(request, mapping):
        return _error(401, "Unauthorized", "unauthorized")
    try:
        body = await _body(request, rt.config.hooks.max_body_bytes)
        context = {
            "body": body,
            "path": mapping.path,
            "hook": mapping.id,
            "query": {k: v for k, v in request.query.items() if k != "token"},
        }
        message = clean_text(render_message(mapping.message_template, context))
        if not message.strip():
            raise ValueError("the rendered message is empty")
        key = _session_key(rt, mapping)
    except (ValueError, InvalidSessionKey) as exc:
        return _error(400, str(exc))
    entry = await rt.services.ensure_session(key)
    refusal = await rt.limits.on_api_arrival(entry.agent_id, entry.key)
    if refusal is not None:  # D102: the agent's or session's limit; no turn
        return _error(429, refusal.text(), "rate_limited")
    target = deliver_target(mapping.deliver)
    run = await start_turn(
        rt.services, key, message, target, lane="hook", meta={"hook": mapping.id}
    )
    done = rt.spawn(finish_turn(rt.services, run, target, "hook"))
    if request.query.get("wait", "").lower() not in _TRUE:
        return web.json_response({"ok": True, "runId": run.id, "sessionKey": key}, status=202)
    timeout = float(rt.config.agents.defaults.timeout_seconds)
    try:
        result = await asyncio.wait_for(asyncio.shield(done), timeout)
    except TimeoutError:
        return web.json_response(
            {"ok": True, "runId": run.id, "sessionKey": key, "status": "timeout", "reply": None}
        )
    except Exception as exc:  # logged by the background holder too; the caller gets a status
        log.warning("hook %s turn failed: %s", mapping.id, exc)
        result = None
    outcome = result.outcome if isinstance(result, TurnDone) else None
    if outcome is None:
        return web.json_response(
            {"ok": True, "runId": run.id, "sessionKey": key, "status": "error", "reply": None}
        )
    status = outcome.status if outcome.status in ("ok", "timeout") else "error"
    return web.json_response(
        {"ok": True, "runId": run.id, "sessionKey": key, "status": status, "reply": outcome.reply}
    )


def routes() -> list[web.RouteDef]:
    return [web.post("/hooks/{path:.+}", hook)]


OPENAPI_PATHS: dict[str, Any] = {
    "/hooks/{path}": {
        "post": {
            "summary": "Webhook: run one agent turn (hook token, not the gateway token)",
            "parameters": [
                {"name": "path", "in": "path", "required": True, "schema": {"type": "string"}},
                {"name": "wait", "in": "query", "schema": {"type": "boolean"}},
                {"name": "x-crosstalk-hook-token", "in": "header", "schema": {"type": "string"}},
            ],
            "requestBody": {"content": {"application/json": {"schema": {"type": "object"}}}},
            "responses": {
                "200": {"description": "?wait=true: {ok:true, runId, sessionKey, status, reply}"},
                "202": {"description": "{ok:true, runId, sessionKey}"},
                "400": {"description": "invalid or too large body, template failure"},
                "401": {"description": "bad hook token"},
                "404": {"description": "no hook at this path (told only with a hook's token)"},
                "429": {"description": "the agent's or session's limit is reached (D102)"},
            },
        }
    },
}
