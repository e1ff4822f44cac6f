"""A stored run's request, rebuilt from its row and input: for a process that adopts a dead
process's queued turn (D27) and for the process that resumes a paused run (D72). What the
manager stores of a request beyond its row (`request_extras`) is here too, beside its reader."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from core.engine.runs.contract import RunRequest
from core.model.delivery_context import DeliveryContext, normalize_delivery_context
from core.model.roles import parse_role

if TYPE_CHECKING:
    from core.model.records import SessionEntry
    from core.model.tool_context import ToolContext
    from core.store import RunRecord, Store

ContextFor = Callable[..., "ToolContext"]
"""``context_for(entry, origin=...)``: the runtime's tool context of a run in `entry`."""


async def rebuild_request(
    store: Store, run: RunRecord, entry: SessionEntry, context_for: ContextFor
) -> RunRequest:
    msg = await store.message_by_id(run.input_message_id) if run.input_message_id else None
    meta = dict(run.meta or {})
    trace, hops = meta.pop("traceId", None), meta.pop("hops", 0)
    extras = meta.pop("request", None) or {}
    origin = meta.get("origin")
    where: DeliveryContext | None = (
        normalize_delivery_context(origin) if isinstance(origin, dict) else None
    )
    context = context_for(entry, origin=where)
    context = replace(
        context,
        trace_id=str(trace or context.trace_id),
        hops=int(hops or 0),
        role=parse_role(extras.get("role"), "owner" if extras.get("ownerTurn") else "guest"),
        sender=extras.get("sender"),
        person_id=extras.get("personId"),
        group_id=extras.get("group"),
        automated=context.automated or bool(extras.get("automated")),
    )
    return RunRequest(
        session_key=run.session_key,
        message=msg.plain_text() if msg is not None else "",
        context=context,
        deliver=run.deliver,
        lane=run.lane,
        input_message_id=run.input_message_id,
        meta=meta,
        extra_system_prompt=extras.get("extraSystemPrompt"),
        model=extras.get("model"),
        thinking=extras.get("thinking"),
        timeout_seconds=extras.get("timeoutSeconds"),
    )


def request_extras(request: RunRequest) -> dict[str, Any]:
    """What a process that adopts this run needs beyond its row and input (D27)."""
    extras = {
        k: v
        for k, v in (
            ("extraSystemPrompt", request.extra_system_prompt),
            ("model", request.model),
            ("thinking", request.thinking),
            ("timeoutSeconds", request.timeout_seconds),
        )
        if v is not None
    }
    ctx = request.context  # an adopted run keeps its requester (D60)
    extras["role"] = ctx.role
    if ctx.automated:  # a cron or hook turn stays one when adopted: it makes no jobs (D81)
        extras["automated"] = True
    extras.update(
        {
            k: v
            for k, v in (
                ("sender", ctx.sender),
                ("personId", ctx.person_id),
                ("group", ctx.group_id),
            )
            if v
        }
    )
    return {"request": extras}


__all__ = ["rebuild_request", "request_extras"]
