"""``tools``: the global tool policy, session-tool limits and scopes, approvals and questions;
a section of ``core.config.schema.CrosstalkConfig`` kept in its own module like the others."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from core.config.schema_agents import ToolPolicyConfig
from core.config.schema_base import ConfigModel

__all__ = [
    "ApprovalsConfig",
    "AskUserConfig",
    "BySenderRule",
    "SessionScope",
    "SessionToolsConfig",
    "SessionVisibilityConfig",
    "SubagentToolsConfig",
    "ToolsAgentToAgentConfig",
    "ToolsConfig",
]


class ToolsAgentToAgentConfig(ConfigModel):
    """``tools.agentToAgent`` (R1.8): cross-agent session access, off by default."""

    enabled: bool = False
    allow: list[str] = Field(default_factory=list)


class SubagentToolsConfig(ConfigModel):
    """``tools.subagents``: extra restrictions on sub-agent sessions (R4.7)."""

    tools: ToolPolicyConfig = Field(default_factory=ToolPolicyConfig)


SessionScope = Literal["self", "tree", "agent", "all"]


class SessionVisibilityConfig(ConfigModel):
    """``tools.sessions.visibility`` (D61): which sessions each role's session tools reach."""

    owner: SessionScope = "all"
    member: SessionScope = "tree"
    guest: SessionScope = "self"


class SessionToolsConfig(ConfigModel):
    """``tools.sessions``: misuse limits of D8, and the scope of each role (D61)."""

    send_rate_per_minute: int = Field(default=6, ge=0)
    hop_budget: int = Field(default=8, ge=1)
    visibility: SessionVisibilityConfig = Field(default_factory=SessionVisibilityConfig)


class ApprovalsConfig(ConfigModel):
    """``tools.approvals`` (D72): tools whose calls wait for an owner's yes."""

    require: list[str] = Field(default_factory=list)
    """Tool patterns as in D63: names, ``*`` globs, ``mcp:*``, ``mcp:<server>``."""
    timeout_minutes: float = Field(default=60, gt=0)


class AskUserConfig(ConfigModel):
    """``tools.askUser`` (D73): how long a question waits for its answer."""

    timeout_minutes: float = Field(default=15, gt=0)


class BySenderRule(ConfigModel):
    """One ``tools.bySender`` rule (D63): which tools the senders `match` names may use."""

    match: str
    allow: list[str] | None = None
    deny: list[str] = Field(default_factory=list)


class ToolsConfig(ConfigModel):
    """``tools``: global tool policy and session-tool limits."""

    profile: Literal["minimal", "coding", "messaging", "full"] | None = None
    allow: list[str] | None = None
    deny: list[str] = Field(default_factory=list)
    agent_to_agent: ToolsAgentToAgentConfig = Field(default_factory=ToolsAgentToAgentConfig)
    subagents: SubagentToolsConfig = Field(default_factory=SubagentToolsConfig)
    sessions: SessionToolsConfig = Field(default_factory=SessionToolsConfig)
    by_sender: list[BySenderRule] | None = None
    """D63: rules by sender after the agent's policy; None: the defaults (members and guests
    get no cron or MCP tools, guests no sessions_spawn or sessions_send)."""
    approvals: ApprovalsConfig = Field(default_factory=ApprovalsConfig)
    ask_user: AskUserConfig = Field(default_factory=AskUserConfig)
