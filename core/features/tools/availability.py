"""Which tools a session may use: profile → global allow/deny → agent allow/deny → sub-agent."""

from __future__ import annotations

from collections.abc import Iterable

from core.config import CrosstalkConfig
from core.features.tools.registry import SUBAGENT_DENY, filter_tools
from core.model.keys import is_subagent_key


def tool_names_for(
    config: CrosstalkConfig, names: Iterable[str], session_key: str, agent_id: str
) -> list[str]:
    tools = config.tools
    out = filter_tools(names, profile=tools.profile, allow=tools.allow, deny=tools.deny)
    agent = config.agent(agent_id)
    if agent is not None:
        out = filter_tools(out, profile=None, allow=agent.tools.allow, deny=agent.tools.deny)
    if is_subagent_key(session_key):
        sub = tools.subagents.tools
        out = filter_tools(out, profile=None, allow=sub.allow, deny=[*SUBAGENT_DENY, *sub.deny])
    return out
