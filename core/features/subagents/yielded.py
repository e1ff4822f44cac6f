"""`sessions_yield` (D69, D112): a turn ends to wait for its sub-agents; the next announce (or
message) is the session's next turn.

The yield is a row of the store (`session_yields`), so any process of a cluster can take it
when it announces. The row keeps the identity of the turn that yielded (role, sender, person,
chat): the turn the announce starts runs as that one did, never as the sub-agent or as
"whoever" (caller identity from the runtime, D60). Taking it is one transaction that also
checks that no message started a turn since: a message that came first was the next turn.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from core.engine.runs import RunRequest
from core.model.delivery_context import normalize_delivery_context
from core.model.errors import SendBlocked
from core.model.keys import agent_id_of
from core.model.roles import parse_role
from core.model.tool_context import ToolContext
from core.store import now_ms

if TYPE_CHECKING:
    from core.features.services import Services


def yield_context(ctx: ToolContext) -> dict[str, Any]:
    """What the resumed turn needs to run as the yielding one (the token's caller is the
    gateway owner, as for every HTTP and MCP call)."""
    origin = ctx.origin
    return {
        "role": "owner" if ctx.via == "http" else ctx.role,
        "sender": ctx.sender,
        "personId": ctx.person_id,
        "groupId": ctx.group_id,
        "origin": origin.model_dump() if origin is not None and not origin.is_empty() else None,
        "automated": ctx.automated,
        "traceId": ctx.trace_id,
        "hops": ctx.hops,
    }


def resumed_context(services: Services, session_key: str, data: dict[str, Any]) -> ToolContext:
    hops = data.get("hops")
    return ToolContext(
        session_key=session_key,
        agent_id=agent_id_of(session_key),
        origin=normalize_delivery_context(data.get("origin")),
        sandboxed=services.is_sandboxed(session_key),
        trace_id=str(data.get("traceId") or uuid.uuid4().hex),
        hops=hops if isinstance(hops, int) else 0,
        group_id=data.get("groupId") if isinstance(data.get("groupId"), str) else None,
        role=parse_role(data.get("role")),
        sender=data.get("sender") if isinstance(data.get("sender"), str) else None,
        person_id=data.get("personId") if isinstance(data.get("personId"), str) else None,
        automated=bool(data.get("automated")),
    )


async def yield_turn(services: Services, ctx: ToolContext) -> bool:
    """Record the yield; False (and nothing kept) when no sub-agent of the caller runs.

    Recorded first, checked after: a child that ends in between either is seen ended here (the
    yield is withdrawn and the turn goes on) or announces after the row exists (and so is the
    next turn); no announce can slip between the two unseen."""
    store = services.store
    run_id = ctx.run_id if ctx.via == "agent" else None
    at = now_ms()
    await store.yield_session(ctx.session_key, run_id=run_id, context=yield_context(ctx), at=at)
    if await store.list_subagent_runs(requester_key=ctx.session_key, unfinished=True):
        return True
    await store.forget_yield(ctx.session_key)
    return False


async def resume_with_announce(
    services: Services, requester_key: str, text: str, meta: dict[str, Any]
) -> bool:
    """If the requester yielded, its next turn is this announce (the turn's input, stored with
    the announce's meta); True when that turn was started."""
    data = await services.store.take_yield(requester_key)
    if data is None:
        return False
    ctx = resumed_context(services, requester_key, data)
    try:
        await services.start_run(
            RunRequest(
                session_key=requester_key,
                message=text,
                context=ctx,
                deliver=True,
                message_meta=meta,
                meta={"resumedBy": meta.get("subagentRunId")},
            )
        )
    except SendBlocked:  # the session's send policy denies it: the announce is kept as before
        return False
    return True


__all__ = ["resume_with_announce", "yield_turn"]
