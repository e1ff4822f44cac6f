"""`agents_list`: the agent ids the requester may use with `sessions_spawn` (reference R2.5)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.api.plugins import ToolArgs, ToolContext, ToolSpec
from core.api.sessions import agent_id_of, normalize_agent_id
from plugins.session_tools.results import AgentRow, AgentsListResult

if TYPE_CHECKING:
    from core.api.plugins import ToolEnv


class AgentsListArgs(ToolArgs):
    """No parameters."""


def allowed_agents(env: ToolEnv, requester: str) -> tuple[bool, set[str]]:
    """(allowAny, allowed ids) from the requester's `subagents.allowAgents` (default none)."""
    agent = env.config.agent(requester)
    entries = list(agent.subagents.allow_agents) if agent else []
    allow_any = any(e.strip() == "*" for e in entries)
    if allow_any:
        allowed = {a.id for a in env.config.agents.list}
    else:
        allowed = {normalize_agent_id(e) for e in entries if e.strip()}
    return allow_any, allowed | {requester}


async def agents_list(env: ToolEnv, ctx: ToolContext, args: AgentsListArgs) -> AgentsListResult:
    key = ctx.session_key.strip() or env.keys.main_session_key()
    requester = normalize_agent_id(ctx.agent_id or agent_id_of(key))
    allow_any, allowed = allowed_agents(env, requester)
    ordered = [requester, *sorted(allowed - {requester}, key=lambda a: (a.casefold(), a))]
    agents = []
    for agent_id in ordered:
        cfg = env.config.agent(agent_id)
        name = (cfg.name or "").strip() if cfg else ""
        agents.append(AgentRow(id=agent_id, name=name or None, configured=cfg is not None))
    return AgentsListResult(requester=requester, allow_any=allow_any, agents=agents)


SPEC = ToolSpec(
    name="agents_list",
    description="List agent ids you can target with sessions_spawn (based on allowlists).",
    args_model=AgentsListArgs,
    handler=agents_list,
    profiles=frozenset({"messaging"}),
    subagents=False,  # the sub-agent deny list (R4.7)
    mcp=True,
)
