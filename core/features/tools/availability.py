"""Which tools a session may use: profile → global allow/deny → agent allow/deny → sub-agent.

Profiles and the sub-agent rule read what each tool declares on its spec (D94).
"""

from __future__ import annotations

from collections.abc import Callable

from core.config import CrosstalkConfig
from core.features.tools.registry import ToolRegistry, filter_tools, tool_caller
from core.model.by_sender import denied
from core.model.keys import is_subagent_key
from core.model.tool_context import ToolContext


def tool_names_for(
    config: CrosstalkConfig, registry: ToolRegistry, session_key: str, agent_id: str
) -> list[str]:
    tools = config.tools
    out = filter_tools(
        registry.names,
        profile=registry.profile_members(tools.profile),
        allow=tools.allow,
        deny=tools.deny,
    )
    agent = config.agent(agent_id)
    if agent is not None:
        out = filter_tools(out, profile=None, allow=agent.tools.allow, deny=agent.tools.deny)
    if is_subagent_key(session_key):
        sub = tools.subagents.tools
        deny = [*sorted(registry.subagent_denied()), *sub.deny]
        out = filter_tools(out, profile=None, allow=sub.allow, deny=deny)
    return out


def offered_to(registry: ToolRegistry, ctx: ToolContext) -> Callable[[str, str | None], bool]:
    """`offered(tool, mcp_server)`: False for a tool `tools.bySender` takes from the run's
    sender, which the model is then not offered at all (D63)."""
    caller = tool_caller(ctx)
    rules = registry.sender_rules

    def offered(tool: str, mcp_server: str | None = None) -> bool:
        return not denied(rules, caller, tool, mcp_server=mcp_server)

    return offered
