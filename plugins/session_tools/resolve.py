"""Resolve a `sessionKey` argument (a key or a sessionId) to a stored key — reference R1.7."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.api.plugins import ToolRefused
from core.api.sessions import (
    InvalidSessionKey,
    is_key_shaped,
    is_uuid,
    multiple_sessions_found,
    no_session_found,
    not_visible_from_sandbox,
)
from plugins.session_tools.visibility import Visibility

if TYPE_CHECKING:
    from core.api.plugins import ToolEnv


@dataclass(frozen=True, slots=True)
class Resolved:
    key: str
    display: str
    via_session_id: bool


not_visible = not_visible_from_sandbox


async def resolve_reference(env: ToolEnv, vis: Visibility, raw: str) -> Resolved:
    """The target of a tool call; refuses (`forbidden` or `error`) when there is none."""
    raw = raw.strip()
    keys = env.keys
    try:
        canonical = keys.resolve_input(raw, vis.requester_agent)
    except InvalidSessionKey as exc:  # separators only, or too long (D12)
        raise ToolRefused(str(exc), status="error") from None
    if (is_key_shaped(raw) and not is_uuid(raw)) or await env.store.get_session(
        canonical
    ) is not None:
        await vis.check(env, canonical, raw)  # before anything else can tell (D61)
        return Resolved(canonical, keys.display(canonical, vis.requester_agent), False)
    spawned_by = vis.requester_key if vis.restricted else None
    found = await env.store.find_sessions(raw, spawned_by=spawned_by)
    needle = raw.lower()
    exact = [
        e
        for e in found
        if (e.session_id.lower() == needle or e.key == needle) and await vis.in_scope(env, e.key)
    ]
    if len(exact) == 1:
        key = exact[0].key
        return Resolved(key, keys.display(key, vis.requester_agent), True)
    if vis.restricted:
        raise ToolRefused(not_visible(raw))
    if not exact:
        raise ToolRefused(no_session_found(raw), status="error")
    raise ToolRefused(multiple_sessions_found(raw, [e.key for e in exact[:2]]), status="error")


async def spawned_by_requester(env: ToolEnv, vis: Visibility, key: str) -> bool:
    """Sandboxed callers may only reach sessions whose `spawnedBy` is their own key."""
    entry = await env.store.get_session(key)
    return entry is not None and entry.spawned_by == vis.requester_key
