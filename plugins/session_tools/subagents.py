"""`subagents` (D68): the sub-agent runs started in the caller's tree, and cancelling one.

The tree is the caller's session and every session spawned from it (D61's `tree`); a guest's
scope (`self`) narrows it to the runs its own session started. A run outside it is answered
exactly as a run that does not exist.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from core.api.plugins import ToolArgs, ToolContext, ToolInputError, ToolRefused, ToolSpec
from core.api.sessions import SubagentRecord
from plugins.session_tools.results import SubagentRow, SubagentsCancelResult, SubagentsListResult
from plugins.session_tools.visibility import visibility_for

if TYPE_CHECKING:
    from core.api.plugins import ToolEnv

Status = Literal["running", "ok", "error", "timeout", "aborted"]
ENDED: dict[str, Status] = {
    "ok": "ok",
    "error": "error",
    "timeout": "timeout",
    "aborted": "aborted",
}


class SubagentsArgs(ToolArgs):
    action: Literal["list", "cancel"] = "list"
    run_id: str | None = None
    """The run to cancel (`runId` from the list or from sessions_spawn)."""


def unknown_run(run_id: str) -> str:
    return f"No sub-agent run found: {run_id}"


def _status(rec: SubagentRecord) -> Status:
    if rec.outcome is None:
        return "running"
    return ENDED.get(rec.outcome, "error")


async def _tree(env: ToolEnv, ctx: ToolContext) -> list[str]:
    vis = visibility_for(env, ctx)
    if vis.scope == "self" or vis.restricted:
        return [ctx.session_key]
    return await env.store.session_tree(ctx.session_key)


async def subagents(
    env: ToolEnv, ctx: ToolContext, args: SubagentsArgs
) -> SubagentsListResult | SubagentsCancelResult:
    tree = await _tree(env, ctx)
    if args.action == "cancel":
        run_id = (args.run_id or "").strip()
        if not run_id:
            raise ToolInputError("runId required")
        rec = await env.subagents.get(run_id)
        if rec is None or rec.requester_key not in tree:
            raise ToolRefused(unknown_run(run_id), status="error")
        await env.subagents.cancel_run(rec)
        return SubagentsCancelResult(run_id=run_id)
    records = [r for key in tree for r in await env.subagents.runs_of(key)]
    records.sort(key=lambda r: (r.created_at, r.run_id))
    rows = [
        SubagentRow(
            run_id=r.run_id,
            child_session_key=r.child_key,
            label=r.label,
            task=r.task,
            status=_status(r),
            started_at=r.started_at or r.created_at,
            ended_at=r.ended_at,
        )
        for r in records
    ]
    return SubagentsListResult(count=len(rows), subagents=rows)


SPEC = ToolSpec(
    name="subagents",
    description=(
        'Sub-agents started from this conversation: {action: "list"} shows them with their '
        'status; {action: "cancel", runId} stops one (its announce says it was cancelled).'
    ),
    args_model=SubagentsArgs,
    handler=subagents,
    profiles=frozenset({"messaging"}),
    subagents=False,  # a session tool: the sub-agent deny list (R4.7)
    mcp=True,
)
