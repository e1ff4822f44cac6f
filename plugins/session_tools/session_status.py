"""`session_status`: what a session is, where it answers, what it costs and what it is doing
(D67); `model` (owners only) sets the session's model override, which is stored on the session
and so survives restarts.

The session is resolved and scoped by the same function as `sessions_history` (D61), so a
session outside the caller's scope is answered as one that does not exist.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from core.api.plugins import ToolArgs, ToolContext, ToolRefused, ToolSpec
from core.api.sessions import SessionEntry
from plugins.session_tools.results import SessionStatusResult
from plugins.session_tools.sessions_history import visible_target
from plugins.session_tools.visibility import visibility_for

if TYPE_CHECKING:
    from core.api.plugins import ToolEnv

OWNER_ONLY = "Only an owner can set a session's model."


class SessionStatusArgs(ToolArgs):
    session_key: str | None = None
    """A session key or id; absent or `current`: the caller's own session."""
    model: str | None = None
    """Owners only: `<provider>/<model>` sets the session's model, `default` clears it."""


def unknown_model(ref: str) -> str:
    return f"Unknown model: {ref}"


async def set_model(env: ToolEnv, entry: SessionEntry, ref: str) -> SessionEntry:
    """The session's model override (D67): a configured model, or `default` to clear it."""
    ref = ref.strip()
    if ref.lower() == "default":
        return await env.store.update_session(entry.key, touch=False, model=None)
    if not env.models.is_known(ref):
        raise ToolRefused(unknown_model(ref), status="error")
    return await env.store.update_session(entry.key, touch=False, model=ref)


def _channel(env: ToolEnv, entry: SessionEntry) -> str:
    """As sessions_list rows show it: `internal` for cron, hook and node sessions."""
    if entry.kind in ("cron", "hook", "node"):
        return "internal"
    return entry.channel or entry.last_channel or env.keys.channel_of(entry.key) or "unknown"


def _route(entry: SessionEntry) -> dict[str, Any] | None:
    if not entry.last_channel or not entry.last_to:
        return None
    route: dict[str, Any] = {"channel": entry.last_channel, "to": entry.last_to}
    if entry.last_account_id:
        route["accountId"] = entry.last_account_id
    if entry.last_thread_id:
        route["threadId"] = entry.last_thread_id
    return route


async def status_of(env: ToolEnv, entry: SessionEntry, display: str) -> SessionStatusResult:
    activity = await env.store.session_activity(entry.key)
    decision = env.gate.decide(entry)
    return SessionStatusResult(
        session_key=display,
        kind=entry.kind,
        channel=_channel(env, entry),
        agent_id=entry.agent_id,
        model=entry.model or env.models.default_ref(entry.agent_id),
        status="running" if activity.running else "idle",
        queued=activity.queued,
        send_policy={"effective": decision.action, "source": decision.source},
        route=_route(entry),
        tokens={"input": entry.input_tokens or 0, "output": entry.output_tokens or 0},
        cost_usd=entry.cost_usd or 0.0,
        created_at=entry.created_at,
        updated_at=entry.updated_at,
        subagents={"running": activity.subagents_running, "total": activity.subagents_total},
    )


async def session_status(
    env: ToolEnv, ctx: ToolContext, args: SessionStatusArgs
) -> SessionStatusResult:
    vis = visibility_for(env, ctx)
    raw = (args.session_key or "").strip()
    if not raw or raw == "current":
        raw = ctx.session_key
    if raw == ctx.session_key:  # D113: its own session, even from a sandbox
        vis = replace(vis, restricted=False)
    target = await visible_target(env, vis, raw)
    entry = await env.store.get_session(target.key)
    if entry is None:
        raise ToolRefused(f"No session found: {raw}", status="error")
    if args.model is not None and args.model.strip():
        if not (ctx.owner or ctx.via == "http"):
            raise ToolRefused(OWNER_ONLY)
        entry = await set_model(env, entry, args.model)
    return await status_of(env, entry, target.display)


SPEC = ToolSpec(
    name="session_status",
    description=(
        "Status of a session (default: this one): kind, channel, model, running or idle, "
        "queued turns, send policy, route, tokens, cost, sub-agents. Owners may set its "
        "model with `model` (`default` clears)."
    ),
    args_model=SessionStatusArgs,
    handler=session_status,
    profiles=frozenset({"messaging"}),
    subagents=False,  # a session tool: the sub-agent deny list (R4.7)
    mcp=True,
)
