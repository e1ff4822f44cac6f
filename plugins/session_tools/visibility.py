"""Who may see which session: sandbox `spawned` visibility and `tools.agentToAgent` rules."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.api.plugins import ToolContext
from core.api.sessions import is_subagent_key

if TYPE_CHECKING:
    from core.api.plugins import ToolEnv


@dataclass(frozen=True, slots=True)
class Visibility:
    requester_key: str
    requester_agent: str
    restricted: bool
    """True when only sessions spawned by the requester are visible (reference R2.0)."""


def visibility_for(env: ToolEnv, ctx: ToolContext) -> Visibility:
    restricted = (
        ctx.sandboxed
        and env.config.agents.defaults.sandbox.session_tools_visibility == "spawned"
        and bool(ctx.session_key.strip())
        and not is_subagent_key(ctx.session_key)
    )
    return Visibility(ctx.session_key, ctx.agent_id, restricted)


def _pattern_matches(pattern: str, agent_id: str) -> bool:
    p = pattern.strip()
    if not p:
        return False
    if p == "*":
        return True
    if "*" in p:
        return fnmatch.fnmatchcase(agent_id.lower(), p.lower())
    return p == agent_id


class AgentToAgentPolicy:
    """`tools.agentToAgent`: disabled by default; `allow` lists agent-id patterns."""

    def __init__(self, enabled: bool, allow: list[str]) -> None:
        self.enabled = enabled
        self.allow = [p for p in allow]

    def matches(self, agent_id: str) -> bool:
        return not self.allow or any(_pattern_matches(p, agent_id) for p in self.allow)

    def is_allowed(self, requester: str, target: str) -> bool:
        if requester == target:
            return True
        return self.enabled and self.matches(requester) and self.matches(target)

    def visible_agents(self, requester: str) -> tuple[tuple[str, ...] | None, tuple[str, ...]]:
        """(exact ids, glob patterns) of agents whose sessions `requester` may list.

        `None` as exact ids means every agent.
        """
        if not self.enabled or not self.matches(requester):
            return (requester,), ()
        if not self.allow or any(p.strip() == "*" for p in self.allow):
            return None, ()
        exact = tuple({requester, *(p.strip() for p in self.allow if p.strip() and "*" not in p)})
        globs = tuple(p.strip() for p in self.allow if "*" in p and p.strip() != "*")
        return exact, globs


def a2a_policy(env: ToolEnv) -> AgentToAgentPolicy:
    cfg = env.config.tools.agent_to_agent
    return AgentToAgentPolicy(cfg.enabled, list(cfg.allow))
