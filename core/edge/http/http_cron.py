"""`/api/cron` (bearer): list, add, remove, enable/disable and run cron jobs (D15)."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from core.config.schema_cron import JOB_ID_PATTERN, CronJobConfig
from core.edge.http.appkeys import RUNTIME, SECRET
from core.edge.http.auth import is_authorized, unauthorized
from core.edge.http.http_tools import authorized_model
from core.features.cron.service import CronError


def _error(status: int, message: str) -> web.Response:
    kind = {404: "not_found", 409: "conflict"}.get(status, "invalid_request_error")
    return web.json_response({"error": {"message": message, "type": kind}}, status=status)


def _job_id(request: web.Request) -> str | web.Response:
    if not is_authorized(request, request.app[SECRET]):
        return unauthorized()
    job_id = request.match_info["id"]
    if not JOB_ID_PATTERN.fullmatch(job_id):
        return _error(400, f"invalid id: {job_id!r} (must match [a-z0-9][a-z0-9_-]{{0,63}})")
    return job_id


async def list_jobs(request: web.Request) -> web.Response:
    if not is_authorized(request, request.app[SECRET]):
        return unauthorized()
    rt = request.app[RUNTIME]
    return web.json_response({"jobs": [rt.cron.wire(r) for r in await rt.cron.jobs()]})


async def add_job(request: web.Request) -> web.Response:
    parsed = await authorized_model(request, CronJobConfig, "invalid cron job: ")
    if isinstance(parsed, web.Response):
        return parsed
    rt = request.app[RUNTIME]
    try:
        rec = await rt.cron.add(parsed[0], source="api")
    except CronError as exc:
        return _error(exc.status, str(exc))
    return web.json_response(rt.cron.wire(rec), status=201)


async def get_job(request: web.Request) -> web.Response:
    job_id = _job_id(request)
    if isinstance(job_id, web.Response):
        return job_id
    rt = request.app[RUNTIME]
    try:
        return web.json_response(rt.cron.wire(await rt.cron.get(job_id), runs=True))
    except CronError as exc:
        return _error(exc.status, str(exc))


async def delete_job(request: web.Request) -> web.Response:
    job_id = _job_id(request)
    if isinstance(job_id, web.Response):
        return job_id
    try:
        await request.app[RUNTIME].cron.remove(job_id)
    except CronError as exc:
        return _error(exc.status, str(exc))
    return web.json_response({"ok": True, "id": job_id})


async def run_job(request: web.Request) -> web.Response:
    job_id = _job_id(request)
    if isinstance(job_id, web.Response):
        return job_id
    rt = request.app[RUNTIME]
    try:
        run, _ = await rt.cron.run_now(job_id)
    except CronError as exc:
        return _error(exc.status, str(exc))
    return web.json_response(
        {"ok": True, "runId": run.id, "sessionKey": run.session_key}, status=202
    )


def _toggle(enabled: bool) -> Any:
    async def handler(request: web.Request) -> web.Response:
        job_id = _job_id(request)
        if isinstance(job_id, web.Response):
            return job_id
        rt = request.app[RUNTIME]
        try:
            rec = await rt.cron.set_enabled(job_id, enabled)
        except CronError as exc:
            return _error(exc.status, str(exc))
        return web.json_response(rt.cron.wire(rec))

    return handler


def routes() -> list[web.RouteDef]:
    return [
        web.get("/api/cron", list_jobs),
        web.post("/api/cron", add_job),
        web.get("/api/cron/{id}", get_job),
        web.delete("/api/cron/{id}", delete_job),
        web.post("/api/cron/{id}/run", run_job),
        web.post("/api/cron/{id}/enable", _toggle(True)),
        web.post("/api/cron/{id}/disable", _toggle(False)),
    ]


_AUTH: list[dict[str, list[str]]] = [{"bearer": []}]
_JOB = {
    "type": "object",
    "required": ["id", "message"],
    "properties": {
        "id": {"type": "string", "pattern": "^[a-z0-9][a-z0-9_-]{0,63}$"},
        "schedule": {"type": "string", "description": "5-field cron expression"},
        "tz": {"type": "string"},
        "every": {"type": "string", "description": "e.g. 10m, 1h30m"},
        "at": {"type": "string", "description": "ISO-8601, fires once"},
        "message": {"type": "string"},
        "agentId": {"type": "string"},
        "deliver": {
            "oneOf": [
                {"const": "none"},
                {
                    "type": "object",
                    "required": ["channel", "to"],
                    "properties": {
                        "channel": {"type": "string"},
                        "to": {"type": "string"},
                        "accountId": {"type": "string"},
                        "threadId": {"type": ["string", "integer"]},
                    },
                },
            ]
        },
        "enabled": {"type": "boolean"},
    },
}


def _json(schema: dict[str, Any], desc: str) -> dict[str, Any]:
    return {"description": desc, "content": {"application/json": {"schema": schema}}}


def _err(desc: str) -> dict[str, Any]:
    return {"description": desc}


_ID = [
    {
        "name": "id",
        "in": "path",
        "required": True,
        "schema": {"type": "string", "pattern": "^[a-z0-9][a-z0-9_-]{0,63}$"},
    }
]
_TOGGLE = {
    "security": _AUTH,
    "parameters": _ID,
    "responses": {"200": {"description": "the job"}, "404": _err("unknown job")},
}

OPENAPI_PATHS: dict[str, Any] = {
    "/api/cron": {
        "get": {
            "summary": "Cron jobs with lastRunAt, lastStatus, nextRunAt",
            "security": _AUTH,
            "responses": {"200": {"description": "{jobs:[…]}"}, "401": _err("unauthorized")},
        },
        "post": {
            "summary": "Add a cron job",
            "security": _AUTH,
            "requestBody": _json(_JOB, "job"),
            "responses": {
                "201": {"description": "the job"},
                "400": _err("invalid job (id pattern, schedule, at in the past)"),
                "409": _err("a job with this id exists"),
            },
        },
    },
    "/api/cron/{id}": {
        "get": {
            "summary": "One job with its last 20 runs",
            "security": _AUTH,
            "parameters": _ID,
            "responses": {"200": {"description": "the job"}, "404": _err("unknown job")},
        },
        "delete": {
            "summary": "Remove a job",
            "security": _AUTH,
            "parameters": _ID,
            "responses": {
                "200": {"description": "{ok:true, id}"},
                "400": _err("invalid id"),
                "404": _err("unknown job"),
                "409": _err("defined in the config file"),
            },
        },
    },
    "/api/cron/{id}/run": {
        "post": {
            "summary": "Fire a job now",
            "security": _AUTH,
            "parameters": _ID,
            "responses": {
                "202": {"description": "{ok:true, runId, sessionKey}"},
                "404": _err("unknown job"),
                "409": _err("already running"),
            },
        }
    },
    "/api/cron/{id}/enable": {"post": {"summary": "Enable a job", **_TOGGLE}},
    "/api/cron/{id}/disable": {"post": {"summary": "Disable a job", **_TOGGLE}},
}
