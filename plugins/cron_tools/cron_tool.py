"""The agent tool `cron` (D15): an agent schedules, lists and removes reminders.

Who is asking comes from the tool context (the runtime), never from the model: a job belongs to
the requesting session, delivers to that session's last route unless told otherwise, and is
listed and removed only by that session — unless the caller is unsandboxed and the turn was
started by an owner (or over the token-authenticated HTTP API). Adds are rate-limited and
counted per session and in all; a cron or hook turn adds none unless the owner allows it, and
a job remembers the person whose message made it, so revoking them stops it (D81).
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any, Literal

from pydantic import ValidationError

from core.api.plugins import (
    ToolArgs,
    ToolContext,
    ToolError,
    ToolInputError,
    ToolResult,
    ToolSpec,
    validation_message,
)
from core.api.sessions import CronError, CronJobConfig, deliver_target, session_target, target_wire
from plugins.cron_tools.results import CronJobResult, CronListResult, CronRemoveResult

if TYPE_CHECKING:
    from core.api.plugins import ToolEnv


class CronArgs(ToolArgs):
    action: Literal["add", "list", "remove"]
    id: str | None = None
    schedule: str | None = None
    every: str | None = None
    at: str | None = None
    tz: str | None = None
    message: str | None = None
    deliver: dict[str, Any] | Literal["none"] | None = None


def _privileged(ctx: ToolContext) -> bool:
    return not ctx.sandboxed and (ctx.owner or ctx.via == "http")


async def _add(env: ToolEnv, ctx: ToolContext, args: CronArgs) -> CronJobResult:
    if not (args.message or "").strip():
        raise ToolInputError("message required")
    limits = env.config.cron
    if ctx.automated and not limits.allow_from_cron_turns:
        raise ToolError(
            "cron jobs cannot be created from a cron or hook turn (cron.allowFromCronTurns)"
        )
    if await env.cron.count_jobs(ctx.session_key) >= limits.max_jobs_per_session:
        raise ToolError(
            f"cron job limit reached: at most {limits.max_jobs_per_session} jobs "
            "per session; remove one first"
        )
    if ctx.sender and await env.cron.count_agent_jobs(ctx.sender) >= limits.max_jobs_per_session:
        raise ToolError(  # a person's jobs, whichever sessions they were made in
            f"cron job limit reached: at most {limits.max_jobs_per_session} jobs per person; "
            "remove one first"
        )
    if await env.cron.count_agent_jobs() >= limits.max_agent_jobs:
        raise ToolError(
            f"cron job limit reached: agents hold {limits.max_agent_jobs} jobs in all "
            "(cron.maxAgentJobs); remove one first"
        )
    own = session_target(await env.store.get_session(ctx.session_key)) or ctx.origin
    if args.deliver is None:
        deliver: Any = target_wire(own if own is not None and own.to else None)
    else:
        deliver = args.deliver
        wanted = deliver_target(deliver) if isinstance(deliver, dict) else None
        if ctx.sandboxed and wanted is not None and wanted != own:
            raise ToolError("sandboxed sessions may deliver only to their own chat (or none)")
    raw = {
        "id": args.id or f"reminder-{uuid.uuid4().hex[:8]}",
        "schedule": args.schedule,
        "every": args.every,
        "at": args.at,
        "tz": args.tz,
        "message": args.message,
        "agentId": ctx.agent_id,
        "deliver": deliver,
    }
    try:
        spec = CronJobConfig.model_validate({k: v for k, v in raw.items() if v is not None})
    except ValidationError as exc:
        raise ToolInputError(validation_message(exc)) from exc
    err = env.cron.add_limiter.check(ctx.session_key, limits.agent_adds_per_minute)
    if err is not None:
        raise ToolError(err)
    try:
        rec = await env.cron.add(spec, source="agent", owner_session=ctx.session_key, creator=ctx)
    except CronError as exc:
        raise ToolError(str(exc)) from exc
    return CronJobResult(job=env.cron.wire(rec))


async def handle(env: ToolEnv, ctx: ToolContext, args: CronArgs) -> ToolResult:
    if args.action == "add":
        return await _add(env, ctx, args)
    owner = None if _privileged(ctx) else ctx.session_key
    if args.action == "list":
        jobs = [env.cron.wire(r) for r in await env.cron.jobs(owner_session=owner)]
        return CronListResult(count=len(jobs), jobs=jobs)
    job_id = (args.id or "").strip()
    if not job_id:
        raise ToolInputError("id required")
    try:
        rec = await env.cron.get(job_id)
        if owner is not None and rec.owner_session != owner:
            raise ToolError(f"cron job not found: {job_id}")
        await env.cron.remove(job_id)
    except CronError as exc:
        raise ToolError(str(exc)) from exc
    return CronRemoveResult(removed=job_id)


SPEC = ToolSpec(
    name="cron",
    description=(
        "Schedule a message to yourself: a reminder or a recurring task. action=add with "
        "message and one of schedule (5-field cron, optional tz), every (e.g. 10m, 1h) or at "
        "(ISO-8601 time, once); the reply is sent to this chat unless deliver is given "
        '({channel, to} or "none"). action=list shows your jobs; action=remove takes id.'
    ),
    args_model=CronArgs,
    handler=handle,
    subagents=False,  # the sub-agent deny list (R4.7)
)
