"""`sessions_history`: one session's transcript (reference R2.2, decision D3), or the window
around one message (`messageId`, D66)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from core.api.plugins import (
    ToolArgs,
    ToolContext,
    ToolRefused,
    ToolSpec,
    floor_clamp,
    required_text,
)
from core.api.sessions import TranscriptMessage, agent_id_of
from plugins.session_tools.resolve import (
    Resolved,
    not_visible,
    resolve_reference,
    spawned_by_requester,
)
from plugins.session_tools.results import SessionsHistoryResult
from plugins.session_tools.visibility import Visibility, a2a_policy, visibility_for

if TYPE_CHECKING:
    from core.api.plugins import ToolEnv

DEFAULT_LIMIT, MAX_LIMIT = 50, 200
MAX_BYTES = 256 * 1024
A2A_DISABLED = (
    "Agent-to-agent history is disabled. Set tools.agentToAgent.enabled=true to "
    "allow cross-agent access."
)
A2A_DENIED = "Agent-to-agent history denied by tools.agentToAgent.allow."


class SessionsHistoryArgs(ToolArgs):
    session_key: str | None = None
    limit: float | None = None
    include_tools: bool = False
    message_id: int | None = None
    include_summaries: bool = False
    """Also the summaries compaction stored (role `summary`, D71)."""
    """A message's id (from sessions_search): the window of `limit` messages centred on it."""


def cap_messages(
    messages: list[dict[str, Any]], max_bytes: int = MAX_BYTES
) -> tuple[list[dict[str, Any]], bool]:
    """Drop the oldest messages until the JSON fits `max_bytes`."""
    sizes = [len(json.dumps(m, ensure_ascii=False).encode()) + 1 for m in messages]
    total, start = sum(sizes) + 2, 0
    while total > max_bytes and start < len(messages):
        total -= sizes[start]
        start += 1
    return messages[start:], start > 0


async def visible_target(env: ToolEnv, vis: Visibility, raw: str) -> Resolved:
    """The session a `sessionKey` names, refused unless `vis` may read it (R2.0, D10)."""
    target = await resolve_reference(env, vis, raw)
    if (
        vis.restricted
        and not target.via_session_id
        and not await spawned_by_requester(env, vis, target.key)
    ):
        raise ToolRefused(not_visible(raw))
    policy = a2a_policy(env)
    target_agent = agent_id_of(target.key)
    if target_agent != vis.requester_agent:
        if not policy.enabled:
            raise ToolRefused(A2A_DISABLED)
        if not policy.is_allowed(vis.requester_agent, target_agent):
            raise ToolRefused(A2A_DENIED)
    return target


def _wire(m: TranscriptMessage) -> dict[str, Any]:
    return {"id": m.id, **m.to_wire()}  # D66: a search hit's messageId opens its place


async def sessions_history(
    env: ToolEnv, ctx: ToolContext, args: SessionsHistoryArgs
) -> SessionsHistoryResult:
    raw = required_text(args.session_key, "sessionKey")
    limit = floor_clamp(args.limit, default=DEFAULT_LIMIT, lo=1, hi=MAX_LIMIT) or DEFAULT_LIMIT
    vis = visibility_for(env, ctx)
    target = await visible_target(env, vis, raw)
    if args.message_id is not None:
        window = await env.store.message_window(
            target.key,
            args.message_id,
            limit,
            include_tools=args.include_tools,
            roles_out=() if args.include_summaries else ("summary",),
        )
        if window is None:
            raise ToolRefused(no_message(args.message_id, target.display), status="error")
        msgs = [_wire(m) for m in window]
    else:
        entry = await env.store.get_session(target.key)
        msgs = (
            []
            if entry is None
            else [
                _wire(m)
                for m in await env.store.history(
                    entry.session_id,
                    limit=limit,
                    include_tools=args.include_tools,
                    include_summaries=args.include_summaries,
                )
            ]
        )
    msgs, truncated = cap_messages(msgs)
    return SessionsHistoryResult(
        session_key=target.display, messages=msgs, truncated=True if truncated else None
    )


def no_message(message_id: int, display: str) -> str:
    return f"No message {message_id} in session {display}"


SPEC = ToolSpec(
    name="sessions_history",
    description="Fetch message history for a session.",
    args_model=SessionsHistoryArgs,
    handler=sessions_history,
    profiles=frozenset({"messaging"}),
    subagents=False,  # the sub-agent deny list (R4.7)
    mcp=True,
)
