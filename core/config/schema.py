"""The Crosstalk configuration tree, rooted at ``CrosstalkConfig``.

One strict pydantic model tree: files use camelCase keys, Python code uses snake_case
attributes, unknown keys are errors. Sections live in ``schema_agents``, ``schema_channels``,
``schema_gateway``, ``schema_tools`` and the other ``schema_*`` modules; this module holds
session, messages, bindings, limits and logging, plus the root.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, field_validator, model_validator

from core.config.schema_agents import AgentConfig, AgentsConfig, ModelsConfig
from core.config.schema_base import ConfigModel, normalize_agent_id
from core.config.schema_channels import ChannelsConfig as StaticChannelsConfig
from core.config.schema_channels import QueueConfig, with_installed_channels
from core.config.schema_cluster import ClusterConfig
from core.config.schema_console import ConsoleConfig
from core.config.schema_cron import CronConfig, HooksConfig
from core.config.schema_gateway import GatewayConfig
from core.config.schema_mcp import McpConfig
from core.config.schema_plugins import PluginsConfig
from core.config.schema_tools import ToolsConfig
from core.config.schema_voice import VoiceConfig
from core.config.state_dir import HOME_STATE_DIR

if TYPE_CHECKING:
    ChannelsConfig = StaticChannelsConfig
else:  # D38: installed third-party channels validate their own `channels.<name>` section
    ChannelsConfig = with_installed_channels(StaticChannelsConfig)

__all__ = [
    "AgentToAgentSessionConfig",
    "CrosstalkConfig",
    "LoggingConfig",
    "SendPolicyConfig",
    "SendPolicyMatch",
    "SendPolicyRule",
    "SessionConfig",
]

logger = logging.getLogger(__name__)

DEFAULT_STATE_DIR = HOME_STATE_DIR
DATABASE_FILE = "crosstalk.db"


# --- session -------------------------------------------------------------------------------


class SendPolicyMatch(ConfigModel):
    """Conditions of a send-policy rule (R5.1); all set conditions must hold."""

    channel: str | None = None
    chat_type: Literal["direct", "group", "channel"] | None = None
    key_prefix: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _migrate_provider(cls, data: Any) -> Any:
        """Older configs said ``provider`` for what is now ``channel`` (R5.1)."""
        if not isinstance(data, dict) or "provider" not in data:
            return data
        data = dict(data)
        provider = data.pop("provider")
        channel = data.get("channel")
        if channel is None:
            data["channel"] = provider
            logger.warning("session.sendPolicy: match.provider is deprecated; use match.channel")
        elif channel != provider:
            raise ValueError(
                f"match.provider ({provider!r}) and match.channel ({channel!r}) disagree; "
                "provider is the legacy name of channel, keep only channel",
            )
        return data

    @field_validator("channel", "key_prefix")
    @classmethod
    def _trim_lower(cls, value: str | None) -> str | None:
        """Resolution compares trimmed, lowercased values (R5.2); blank means unset."""
        if value is None:
            return None
        return value.strip().lower() or None


class SendPolicyRule(ConfigModel):
    """One rule; a missing ``match`` matches every session."""

    action: Literal["allow", "deny"]
    match: SendPolicyMatch | None = None


class SendPolicyConfig(ConfigModel):
    """``session.sendPolicy`` (R5.1); resolution order is in D5 / R5.2."""

    default: Literal["allow", "deny"] | None = None
    rules: list[SendPolicyRule] = Field(default_factory=list)


class AgentToAgentSessionConfig(ConfigModel):
    """``session.agentToAgent``: length of the reply-back loop of ``sessions_send``."""

    max_ping_pong_turns: int = Field(default=5, ge=0, le=5)


class SessionConfig(ConfigModel):
    """``session``: how session keys are built (D1, R1.1) and the send policy."""

    scope: Literal["per-sender", "global"] = "per-sender"
    main_key: str = "main"
    dm_scope: Literal["main", "per-peer", "per-channel-peer", "per-account-channel-peer"] = "main"
    identity_links: dict[str, list[str]] = Field(default_factory=dict)
    send_policy: SendPolicyConfig | None = None
    agent_to_agent: AgentToAgentSessionConfig = Field(default_factory=AgentToAgentSessionConfig)

    @field_validator("main_key")
    @classmethod
    def _normalise_main_key(cls, value: str) -> str:
        """R1.2: trimmed and lowercased; empty gives ``main``."""
        return value.strip().lower() or "main"


# --- messages ------------------------------------------------------------------------------


class BindingMatch(ConfigModel):
    """What an inbound message must be for its binding to apply (D76); unset fields match all."""

    channel: str
    account_id: str | None = None
    peer: str | None = None
    """A direct chat's peer (the sender's platform id)."""
    group: str | None = None
    """A group or channel id."""


class BindingConfig(ConfigModel):
    """``bindings[]`` (D76): messages that match go to `agentId`."""

    agent_id: str
    match: BindingMatch


class MessagesConfig(ConfigModel):
    """``messages``: busy input (D75)."""

    queue: QueueConfig = Field(default_factory=QueueConfig)


# --- limits (D64) --------------------------------------------------------------------------


class LimitSet(ConfigModel):
    """What one subject may use; an absent field is unlimited (D64)."""

    messages_per_minute: int | None = Field(default=None, ge=0)
    turns_per_day: int | None = Field(default=None, ge=0)
    cost_usd_per_day: float | None = Field(default=None, ge=0)
    cost_usd_per_month: float | None = Field(default=None, ge=0)

    def is_empty(self) -> bool:
        return all(v is None for v in self.model_dump().values())


ROLE_LIMIT_DEFAULTS: dict[str, LimitSet] = {
    "owner": LimitSet(),
    "member": LimitSet(messages_per_minute=20),
    "guest": LimitSet(messages_per_minute=6, turns_per_day=100),
}


class LimitsConfig(ConfigModel):
    """``limits`` (D64): per role (a role you set replaces its defaults), per agent and per
    session, counted in the database."""

    owner: LimitSet | None = None
    member: LimitSet | None = None
    guest: LimitSet | None = None
    per_agent: dict[str, LimitSet] = Field(default_factory=dict)
    per_session: LimitSet | None = None

    def for_role(self, role: str) -> LimitSet:
        own = getattr(self, role, None)
        return own if isinstance(own, LimitSet) else ROLE_LIMIT_DEFAULTS[role]


# --- logging -------------------------------------------------------------------------------


class LoggingConfig(ConfigModel):
    """``logging``: ``json`` writes one JSON object per line, with ``runId`` and ``sessionKey``
    on every line emitted during a turn."""

    format: Literal["text", "json"] = "text"
    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"


# --- root ----------------------------------------------------------------------------------


def _async_database_url(url: str) -> str:
    """Plain driver URLs get the async drivers the store uses."""
    for plain, async_prefix in (
        ("postgresql://", "postgresql+asyncpg://"),
        ("postgres://", "postgresql+asyncpg://"),
        ("sqlite://", "sqlite+aiosqlite://"),
    ):
        if url.startswith(plain):
            return async_prefix + url[len(plain) :]
    return url


class CrosstalkConfig(ConfigModel):
    """The whole configuration. Every section has defaults, so ``CrosstalkConfig()`` works."""

    gateway: GatewayConfig = Field(default_factory=GatewayConfig)
    models: ModelsConfig = Field(default_factory=ModelsConfig)
    agents: AgentsConfig = Field(default_factory=AgentsConfig)
    session: SessionConfig = Field(default_factory=SessionConfig)
    tools: ToolsConfig = Field(default_factory=ToolsConfig)
    messages: MessagesConfig = Field(default_factory=MessagesConfig)
    bindings: list[BindingConfig] = Field(default_factory=list)
    channels: ChannelsConfig = Field(default_factory=ChannelsConfig)
    logging: LoggingConfig = Field(default_factory=LoggingConfig)
    cron: CronConfig = Field(default_factory=CronConfig)
    hooks: HooksConfig = Field(default_factory=HooksConfig)
    mcp: McpConfig = Field(default_factory=McpConfig)
    plugins: PluginsConfig = Field(default_factory=PluginsConfig)
    cluster: ClusterConfig = Field(default_factory=ClusterConfig)
    console: ConsoleConfig = Field(default_factory=ConsoleConfig)
    voice: VoiceConfig = Field(default_factory=VoiceConfig)
    limits: LimitsConfig = Field(default_factory=LimitsConfig)

    @model_validator(mode="after")
    def _known_binding_agents(self) -> CrosstalkConfig:
        known = set(self.agent_ids())
        for i, binding in enumerate(self.bindings):
            if self.agents.list and normalize_agent_id(binding.agent_id) not in known:
                raise ValueError(
                    f"bindings[{i}].agentId names an unknown agent: {binding.agent_id}"
                )
        return self

    def agent_for(
        self,
        channel: str,
        account_id: str,
        *,
        direct: bool,
        peer: str,
        group: str | None,
    ) -> str:
        """D76: the agent of the first binding that matches, else the default agent."""
        for binding in self.bindings:
            m = binding.match
            if m.channel.strip().lower() != channel:
                continue
            if m.account_id is not None and m.account_id != account_id:
                continue
            if m.peer is not None and (not direct or m.peer != peer):
                continue
            if m.group is not None and (direct or m.group != group):
                continue
            return normalize_agent_id(binding.agent_id)
        return self.default_agent_id()

    @model_validator(mode="after")
    def _known_mcp_servers(self) -> CrosstalkConfig:
        for entry in self.agents.list:
            unknown = [n for n in entry.mcp or [] if n not in self.mcp.servers]
            if unknown:
                raise ValueError(
                    f"agents.list[{entry.id}].mcp names unknown MCP server(s): {', '.join(unknown)}"
                )
        return self

    def default_agent_id(self) -> str:
        """The ``default: true`` entry, else the first entry, else ``"main"`` (R1.3)."""
        for entry in self.agents.list:
            if entry.default:
                return entry.id
        return self.agents.list[0].id if self.agents.list else "main"

    def queue_for(self, channel: str | None) -> QueueConfig:
        """A channel's busy-input mode (D75): `channels.<ch>.queue`, else `messages.queue`."""
        section = getattr(self.channels, channel, None) if channel else None
        own = getattr(section, "queue", None)
        return own if isinstance(own, QueueConfig) else self.messages.queue

    def agent_ids(self) -> list[str]:
        """Configured agent ids; ``["main"]`` when ``agents.list`` is empty."""
        return [entry.id for entry in self.agents.list] or ["main"]

    def agent(self, agent_id: str) -> AgentConfig | None:
        """The ``agents.list`` entry for an id (normalised first), or ``None``."""
        wanted = normalize_agent_id(agent_id)
        return next((entry for entry in self.agents.list if entry.id == wanted), None)

    def resolve_state_dir(self) -> Path:
        """State directory as a path (``~`` already expanded at load time)."""
        return Path(self.gateway.state_dir).expanduser()

    def database_url(self) -> str:
        """SQLAlchemy async URL: the configured one (async driver added) or SQLite in state."""
        url = self.gateway.database.url
        if url is None or not url.strip():
            return f"sqlite+aiosqlite:///{self.resolve_state_dir() / DATABASE_FILE}"
        return _async_database_url(url.strip())
