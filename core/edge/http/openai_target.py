"""Which agent, model and session an OpenAI-style request runs in (D14, D80).

`model`: `crosstalk` (or absent) is the default agent, `crosstalk/<id>` that agent, a configured
`<provider>/<modelId>` the default agent with that model for this request; anything else is 404
`model_not_found`. Session: the `x-crosstalk-session-key` header (an `agent:<id>:…` key runs that
agent whatever `model` says); else `user` → `openai-user:<user>` under the picked agent; else the
session whose conversation so far equals the request's earlier messages; else a new
`agent:<agentId>:openai:<id>`. Without header or `user`, never the main session (D80). A
Responses request's `previous_response_id` continues that response's session (D194).
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aiohttp import web

from core.config import normalize_agent_id
from core.edge.http.openai_errors import openai_error
from core.edge.http.openai_session import Exchange, new_conversation_id, session_of
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
    model: str | None = None
    """A configured `<provider>/<modelId>` the request named: this turn's model (D80)."""

    @property
    def model_name(self) -> str:
        return self.model or f"{MODEL_PREFIX}/{self.agent_id}"


def model_ids(rt: Runtime) -> list[str]:
    return [MODEL_PREFIX] + [f"{MODEL_PREFIX}/{a}" for a in rt.config.agent_ids()]


def model_object(model_id: str) -> dict[str, Any]:
    return {"id": model_id, "object": "model", "created": CREATED, "owned_by": "crosstalk"}


def agent_for_model(rt: Runtime, model: str | None) -> str | None:
    """The agent a `crosstalk…` model value picks; None when it names no agent of ours."""
    name = (model or "").strip()
    if name.startswith(f"{MODEL_PREFIX}/"):
        wanted = normalize_agent_id(name[len(MODEL_PREFIX) + 1 :])
        return wanted if wanted in rt.config.agent_ids() else None
    if name in ("", MODEL_PREFIX):
        return rt.config.default_agent_id()
    return None


def model_not_found(model: str) -> web.Response:
    return openai_error(
        404, f"model not found: {model}", "invalid_request_error", "model_not_found"
    )


def pick_model(rt: Runtime, model: str | None) -> tuple[str, str | None] | None:
    """(agent, model override) for a request's `model` (D80), None for an unknown name."""
    agent_id = agent_for_model(rt, model)
    if agent_id is not None:
        return agent_id, None
    name = (model or "").strip()
    if "/" in name and rt.models.is_known(name):
        return rt.config.default_agent_id(), name
    return None


def named_user(user: str | None) -> str | None:
    """The `user` a session is named after, or None: a value of only separators and spaces
    (`":"`) names nobody, and would otherwise put every such client in one `openai-user`
    session (D195)."""
    if user is None or not user.replace(":", "").strip():
        return None
    return user.strip()


async def resolve_target(
    rt: Runtime,
    request: web.Request,
    model: str | None,
    user: str | None,
    earlier: Sequence[Exchange] = (),
    session_key: str | None = None,
) -> Target | web.Response:
    """`session_key`: the session a Responses request continues (`previous_response_id`,
    D194); the session header still wins."""
    picked = pick_model(rt, model)
    if picked is None:
        return model_not_found(str(model))
    agent_id, override = picked
    raw_key = request.headers.get(SESSION_HEADER, "").strip()
    if not _PRINTABLE_ASCII.fullmatch(raw_key):
        return openai_error(
            400, f"invalid session key: the {SESSION_HEADER} header must be printable ASCII"
        )
    named = named_user(user)
    try:
        if raw_key == "main":
            key = rt.keys.main_session_key(agent_id)
        elif raw_key:
            key = rt.keys.canonical(raw_key, agent_id)
        elif session_key is not None:
            key = session_key
        elif named is not None:
            key = rt.keys.canonical(f"openai-user:{named}", agent_id)
        else:
            found = await session_of(rt.store, earlier)
            key = found or rt.keys.canonical(f"openai:{new_conversation_id()}", agent_id)
    except InvalidSessionKey as exc:
        return openai_error(400, str(exc))
    parsed = parse_agent_key(key)
    return Target(parsed.agent_id if parsed else agent_id, key, override)
