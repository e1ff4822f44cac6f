"""Authenticated JSON API: sessions (get/patch = `sessions.patch`) and the delivery log."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Literal, get_args
from urllib.parse import unquote

from aiohttp import web
from pydantic import BaseModel, ConfigDict, field_validator

from core.edge.http.appkeys import RUNTIME, SECRET
from core.edge.http.auth import is_authorized, unauthorized
from core.edge.http.edge import error_response
from core.edge.http.http_tools import authorized_model
from core.engine.outbound.delivery import Outcome
from core.features.tools.rows import RowBuilder
from core.model.text import clean_text
from core.store import SessionEntry, StoreError

if TYPE_CHECKING:
    from core.features.tools.env import ToolEnv

OUTCOMES: tuple[str, ...] = get_args(Outcome)
CHANNEL_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


def error(status: int, message: str, type_: str = "invalid_request_error") -> web.Response:
    return error_response(status, message, type_)


class SessionPatch(BaseModel):
    """`sessions.patch`: `sendPolicy` null = inherit; only keys present are changed."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    sendPolicy: Literal["allow", "deny"] | None = None
    label: str | None = None
    model: str | None = None

    @field_validator("label")
    @classmethod
    def _label(cls, v: str | None) -> str | None:
        if v is None:
            return None
        v = v.strip()
        if not v:
            raise ValueError("invalid label: empty")
        if len(v) > 64:
            raise ValueError("invalid label: too long (max 64)")
        return v


def entry_row(
    rt: ToolEnv, entry: SessionEntry, builder: RowBuilder | None = None
) -> dict[str, Any]:
    """A session as the API shows it: the `sessions_list` row, its canonical key and agent,
    and its effective send policy with what decided it (the gate's own `decide`, D5)."""
    row = (builder or RowBuilder(rt, rt.config.default_agent_id())).row(entry)
    row.update(
        sessionKey=entry.key,
        agentId=entry.agent_id,
        effectiveSendPolicy=rt.gate.decide(entry).to_wire(),
    )
    return row


def _key(request: web.Request) -> str:
    """The path's key, canonical; a blank, separator-only or too long key raises
    InvalidSessionKey, which the edge answers with 400 (D12)."""
    rt = request.app[RUNTIME]
    raw = unquote(request.match_info["key"]).strip()
    return rt.keys.main_session_key() if raw == "main" else rt.keys.canonical(raw)


async def _find(request: web.Request, key: str) -> SessionEntry | None:
    """The session at `key`. A configured agent's main session is there before anything
    touched it (`sessions_list` shows it, D199), so asking for it makes its row."""
    rt = request.app[RUNTIME]
    entry = await rt.store.get_session(key)
    if entry is None and key in {rt.keys.main_session_key(a) for a in rt.config.agent_ids()}:
        entry = await rt.services.ensure_session(key)
    return entry


async def get_session(request: web.Request) -> web.Response:
    if not is_authorized(request, request.app[SECRET]):
        return unauthorized()
    rt = request.app[RUNTIME]
    entry = await _find(request, _key(request))
    if entry is None:
        return error(404, f"Unknown session: {_key(request)}", "not_found")
    return web.json_response({"ok": True, "entry": entry_row(rt.tool_env, entry)})


async def patch_session(request: web.Request) -> web.Response:
    parsed = await authorized_model(request, SessionPatch, "invalid sessions.patch params: ")
    if isinstance(parsed, web.Response):
        return parsed
    patch, body = parsed
    if not body:  # nothing to change is a mistake worth saying, not a silent 200
        return error(400, "sessions.patch requires at least one of: sendPolicy, label, model")
    rt = request.app[RUNTIME]
    key = _key(request)
    if await _find(request, key) is None:
        return error(404, f"Unknown session: {key}", "not_found")
    fields: dict[str, Any] = {}
    if "sendPolicy" in body:
        fields["send_policy"] = patch.sendPolicy
    if "model" in body:
        if patch.model is not None and not rt.models.is_known(patch.model):
            return error(400, f"invalid model: {patch.model}")
        fields["model"] = patch.model
    try:
        if "label" in body:
            await rt.store.set_label(key, patch.label)
        entry = await rt.store.update_session(key, **fields)
    except StoreError as exc:
        if str(exc).startswith("label already in use"):  # another session holds it
            return error(409, str(exc), "conflict")
        return error(400, str(exc))
    return web.json_response({"ok": True, "key": key, "entry": entry_row(rt.tool_env, entry)})


async def list_deliveries(request: web.Request) -> web.Response:
    if not is_authorized(request, request.app[SECRET]):
        return unauthorized()
    rt = request.app[RUNTIME]
    session = clean_text(request.query.get("session", ""))
    key = None
    if session:
        key = rt.keys.main_session_key() if session == "main" else rt.keys.canonical(session)
    raw_limit = request.query.get("limit", "100")
    if not re.fullmatch(r"-?[0-9]+", raw_limit):
        return error(400, "limit must be an integer")
    digits = raw_limit.lstrip("-").lstrip("0")  # clamped, so huge values need no int()
    limit = (
        1
        if raw_limit.startswith("-")
        else max(1, min(1000, int(digits[:5] or "0") if len(digits) < 5 else 1000))
    )
    outcome = request.query.get("outcome") or None
    if outcome is not None and outcome not in OUTCOMES:
        return error(400, f"outcome must be one of: {', '.join(OUTCOMES)}")
    channel = request.query.get("channel") or None
    if channel is not None and not CHANNEL_NAME.fullmatch(channel):
        return error(400, f"invalid channel: {channel[:64]!r} (a lowercase channel name)")
    raw_since = request.query.get("since")
    if raw_since is not None and not re.fullmatch(r"[0-9]{1,15}", raw_since):
        return error(400, "since must be a time in milliseconds since the epoch")
    rows = await rt.store.list_deliveries(
        session_key=key,
        outcome=outcome,
        limit=limit,
        channel=channel,
        since=None if raw_since is None else int(raw_since),
    )
    chunks = await rt.store.chunks_of([r.id for r in rows if r.id is not None])
    return web.json_response(
        {
            "ok": True,
            "deliveries": [
                {**r.to_wire(), "chunks": [c.to_wire() for c in chunks.get(r.id or 0, [])]}
                for r in rows
            ],
        }
    )


SESSION_PATH = "/api/sessions/{key:.+(?<!/reset)}"
"""A key runs to the end of the path (it may hold `/`), except the `/reset` action's suffix
(`core.edge.http.http_sessions`): one resource per path keeps each `Allow` header exact."""


def routes() -> list[web.RouteDef]:
    return [
        web.get(SESSION_PATH, get_session),
        web.patch(SESSION_PATH, patch_session),
        web.get("/api/deliveries", list_deliveries),
    ]
