"""Which agent and session an OpenAI-style request runs in (D14).

`model`: `crosstalk` (or absent, or any foreign name) is the default agent, `crosstalk/<id>`
that agent (unknown → 404 `model_not_found`). Session: the `x-crosstalk-session-key` header
(an `agent:<id>:…` key runs that agent whatever `model` says); else `user` →
`openai-user:<user>` under the picked agent; else that agent's main session.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aiohttp import web

from core.config import normalize_agent_id
from core.edge.http.openai_errors import openai_error
from core.model.keys import InvalidSessionKey, parse_agent_key

if TYPE_CHECKING:
    from core.runtime import Runtime

SESSION_HEADER = "x-crosstalk-session-key"
_PRINTABLE_ASCII = re.compile(r"[ -~]*")
MODEL_PREFIX = "crosstalk"
CREATED = int(time.time())
"""`created` of every model object: when this gateway process started."""


@dataclass(frozen=True, slots=True)
class Target:
    agent_id: str
    session_key: str

    @property
    def model_name(self) -> str:
        return f"{MODEL_PREFIX}/{self.agent_id}"


def model_ids(rt: Runtime) -> list[str]:
    return [MODEL_PREFIX] + [f"{MODEL_PREFIX}/{a}" for a in rt.config.agent_ids()]


def model_object(model_id: str) -> dict[str, Any]:
    return {"id": model_id, "object": "model", "created": CREATED, "owned_by": "crosstalk"}


def agent_for_model(rt: Runtime, model: str | None) -> str | None:
    """The agent a `model` value picks; None when it names an unknown `crosstalk/<id>`."""
    name = (model or "").strip()
    if name.startswith(f"{MODEL_PREFIX}/"):
        wanted = normalize_agent_id(name[len(MODEL_PREFIX) + 1 :])
        return wanted if wanted in rt.config.agent_ids() else None
    return rt.config.default_agent_id()


def model_not_found(model: str) -> web.Response:
    return openai_error(
        404, f"model not found: {model}", "invalid_request_error", "model_not_found"
    )


def resolve_target(
    rt: Runtime, request: web.Request, model: str | None, user: str | None
) -> Target | web.Response:
    agent_id = agent_for_model(rt, model)
    if agent_id is None:
        return model_not_found(str(model))
    raw_key = request.headers.get(SESSION_HEADER, "").strip()
    if not _PRINTABLE_ASCII.fullmatch(raw_key):
        return openai_error(
            400, f"invalid session key: the {SESSION_HEADER} header must be printable ASCII"
        )
    try:
        if raw_key == "main" or (not raw_key and not (user and user.strip())):
            key = rt.keys.main_session_key(agent_id)
        elif raw_key:
            key = rt.keys.canonical(raw_key, agent_id)
        else:
            key = rt.keys.canonical(f"openai-user:{(user or '').strip()}", agent_id)
    except InvalidSessionKey as exc:
        return openai_error(400, str(exc))
    parsed = parse_agent_key(key)
    return Target(parsed.agent_id if parsed else agent_id, key)
