"""`sessions_spawn`: start a sub-agent in an isolated session; never waits for it ([4], D6, D7).

Checks run in the reference order (R4.2) and nothing is started before all of them pass: a
sub-agent caller is refused, the target agent must be allowed by `subagents.allowAgents` (the
agent-to-agent policy is not consulted), the hop budget (D8) must allow one more hop, the model
must be known (D7) and the thinking level valid. The run is then registered so its result is
announced back to the requester's chat (core.features.subagents).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from core.api.plugins import (
    SendBlocked,
    ToolArgs,
    ToolContext,
    ToolRefused,
    ToolSpec,
    floor_clamp,
    required_text,
)
from core.api.sessions import (
    RunRequest,
    StoreError,
    SubagentRecord,
    archive_at,
    hop_error,
    is_subagent_key,
    normalize_agent_id,
    now_ms,
    primary_model,
    subagent_system_prompt,
)
from plugins.session_tools.results import SessionsSpawnResult

if TYPE_CHECKING:
    from core.api.plugins import ToolEnv

FROM_SUBAGENT = "sessions_spawn is not allowed from sub-agent sessions"
OWNER_ONLY_MODEL = "Only an owner can set a sub-agent's model."
LABEL_MAX = 64

THINKING_ALIASES: dict[str, str] = {
    **dict.fromkeys(("on", "enable", "enabled", "low", "thinkhard"), "low"),
    **dict.fromkeys(("think", "min", "minimal"), "minimal"),
    **dict.fromkeys(("mid", "med", "medium", "harder"), "medium"),
    **dict.fromkeys(("high", "ultra", "ultrathink", "max", "highest"), "high"),
    **dict.fromkeys(("xhigh", "x-high", "x_high"), "xhigh"),
    "off": "off",
}
XHIGH_MODELS = frozenset({"gpt-5.2", "gpt-5.2-codex", "gpt-5.1-codex"})
BINARY_THINKING_PROVIDERS = frozenset({"zai"})


class SessionsSpawnArgs(ToolArgs):
    task: str | None = Field(default=None, description="What the sub-agent should do.")
    label: str | None = Field(default=None, description="Short name for logs and the announce.")
    agent_id: str | None = Field(default=None, description="Spawn under another agent id.")
    model: str | None = Field(default=None, description="provider/model for the sub-agent.")
    thinking: str | None = None
    run_timeout_seconds: float | None = Field(
        default=None, description="Abort the sub-agent run after N seconds (0 = no limit)."
    )
    timeout_seconds: float | None = Field(
        default=None, description="Legacy alias of runTimeoutSeconds."
    )
    cleanup: str | None = Field(default=None, description='"delete" or "keep" (default).')


def allow_agents_error(env: ToolEnv, requester_agent: str, target_agent: str) -> str | None:
    """R4.2 step 4: `subagents.allowAgents` of the requester agent (`*` allows any)."""
    if target_agent == requester_agent:
        return None
    agent = env.config.agent(requester_agent)
    entries = list(agent.subagents.allow_agents) if agent else []
    if any(e.strip() == "*" for e in entries):
        return None
    if target_agent.lower() in {normalize_agent_id(e).lower() for e in entries if e.strip()}:
        return None
    allowed = ", ".join(e.strip() for e in entries if e.strip()) or "none"
    return f"agentId is not allowed for sessions_spawn (allowed: {allowed})"


def resolve_model(env: ToolEnv, explicit: str | None, target_agent: str) -> str | None:
    """R4.4: explicit > target agent `subagents.model` > defaults `subagents.model`."""
    if explicit and explicit.strip():
        return explicit.strip()
    agent = env.config.agent(target_agent)
    return (primary_model(agent.subagents.model) if agent else None) or primary_model(
        env.config.agents.defaults.subagents.model
    )


def thinking_levels(model_ref: str | None) -> list[str]:
    provider, _, model_id = (model_ref or "").partition("/")
    if provider in BINARY_THINKING_PROVIDERS:
        return ["off", "on"]
    levels = ["off", "minimal", "low", "medium", "high"]
    return [*levels, "xhigh"] if model_id in XHIGH_MODELS else levels


def normalize_thinking(raw: str, model_ref: str | None) -> str | None:
    """The thinking level for `raw`, or None when it is not valid for the model."""
    level = THINKING_ALIASES.get(raw.strip().lower())
    if level == "xhigh" and "xhigh" not in thinking_levels(model_ref):
        return None
    return level


def _label(raw: str | None) -> str | None:
    text = (raw or "").strip()
    return text or None


async def sessions_spawn(
    env: ToolEnv, ctx: ToolContext, args: SessionsSpawnArgs
) -> SessionsSpawnResult:
    task = required_text(args.task, "task")
    if is_subagent_key(ctx.session_key):
        raise ToolRefused(FROM_SUBAGENT)
    requester_key = ctx.session_key
    requester_agent = normalize_agent_id(ctx.agent_id)
    target_agent = (
        normalize_agent_id(args.agent_id)
        if args.agent_id and args.agent_id.strip()
        else requester_agent
    )
    if (err := allow_agents_error(env, requester_agent, target_agent)) is not None:
        raise ToolRefused(err)
    if (err := hop_error(ctx, env.config.tools.sessions.hop_budget)) is not None:
        raise ToolRefused(err, status="error")
    if args.model and args.model.strip() and not (ctx.owner or ctx.via == "http"):
        raise ToolRefused(OWNER_ONLY_MODEL)  # the child's model override: D67, owners only
    model = resolve_model(env, args.model, target_agent)
    if model is not None and not env.models.is_known(model):
        raise ToolRefused(f"invalid model: {model}", status="error")
    thinking: str | None = None
    if args.thinking is not None and args.thinking.strip():
        thinking = normalize_thinking(args.thinking, model or env.models.default_ref(target_agent))
        if thinking is None:
            levels = ", ".join(thinking_levels(model or env.models.default_ref(target_agent)))
            raise ToolRefused(
                f'Invalid thinking level "{args.thinking}". Use one of: {levels}.', status="error"
            )
    run_timeout = floor_clamp(args.run_timeout_seconds, default=None, lo=0)
    if run_timeout is None:
        run_timeout = floor_clamp(args.timeout_seconds, default=0, lo=0) or 0
    cleanup = "delete" if (args.cleanup or "").strip().lower() == "delete" else "keep"
    label = _label(args.label)

    child = env.keys.subagent_key(target_agent)
    await env.ensure_session(child, spawned_by=requester_key, model=model, thinking_level=thinking)
    if label is not None:
        await _try_label(env, child, label)
    prompt = subagent_system_prompt(
        task=task,
        child_key=child,
        requester_key=requester_key,
        requester_channel=ctx.channel,
        label=label,
    )
    try:
        run = await env.start_run(
            RunRequest(
                session_key=child,
                message=task,
                context=ctx.next_hop(
                    child, target_agent, origin=None, sandboxed=env.is_sandboxed(child)
                ),
                extra_system_prompt=prompt,
                deliver=False,
                lane="subagent",
                timeout_seconds=float(run_timeout) if run_timeout > 0 else None,
                model=model,
                thinking=thinking,
                meta={"spawnedBy": requester_key, **({"label": label} if label else {})},
            )
        )
    except SendBlocked as exc:
        await env.store.delete_session(child)
        raise ToolRefused(str(exc), status="error", childSessionKey=child) from None
    created = now_ms()
    await env.subagents.register(
        SubagentRecord(
            run_id=run.id,
            child_key=child,
            requester_key=requester_key,
            task=task,
            created_at=created,
            requester_origin=SubagentRecord.origin_json(ctx.origin),
            label=label,
            cleanup=cleanup,
            model=model,
            trace_id=ctx.trace_id,
            hops=ctx.hops + 1,
            role=ctx.role,
            sender=ctx.sender,
            person_id=ctx.person_id,
            group_id=ctx.group_id,
            automated=ctx.automated,
            archive_at=archive_at(
                created, env.config.agents.defaults.subagents.archive_after_minutes
            ),
        )
    )
    return SessionsSpawnResult(
        child_session_key=child, run_id=run.id, model_applied=True if model is not None else None
    )


async def _try_label(env: ToolEnv, child: str, label: str) -> None:
    """Labels are unique across the store; a taken label stays only on the registry record."""
    try:
        await env.store.set_label(child, label[:LABEL_MAX])
    except StoreError:
        pass


SPEC = ToolSpec(
    name="sessions_spawn",
    description=(
        "Spawn a background sub-agent run in an isolated session and announce the "
        "result back to the requester chat."
    ),
    args_model=SessionsSpawnArgs,
    handler=sessions_spawn,
    profiles=frozenset({"messaging"}),
    subagents=False,  # the sub-agent deny list (R4.7)
    mcp=True,
)
