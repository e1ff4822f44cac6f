"""``models.*`` (LLM providers) and ``agents.*`` (defaults and the agent list)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, SecretStr, field_validator, model_validator

from core.config.schema_base import BaseUrl, ConfigModel, ModelRef, normalize_agent_id

__all__ = [
    "AgentConfig",
    "AgentDefaultsConfig",
    "AgentSubagentsConfig",
    "AgentsConfig",
    "DefaultSubagentsConfig",
    "ModelCost",
    "ModelEntry",
    "ModelsConfig",
    "ProviderConfig",
    "SandboxConfig",
    "ToolPolicyConfig",
]


# --- models --------------------------------------------------------------------------------


class ModelCost(ConfigModel):
    """Price per million tokens, for usage reports."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)


ModelInput = Literal["text", "image"]


class ModelEntry(ConfigModel):
    """One model a provider offers; ``id`` is the part after ``provider/``."""

    id: str = Field(min_length=1)
    name: str | None = None
    context_window: int | None = Field(default=None, ge=1)
    cost: ModelCost | None = None
    input: list[ModelInput] = Field(default_factory=lambda: list[ModelInput](["text"]))
    """What the model reads: ``["text", "image"]`` lets inbound photos reach it as images."""


ProviderApi = Literal[
    "openai-completions", "openai-responses", "anthropic-messages", "google-gemini", "ollama"
]


class ProviderConfig(ConfigModel):
    """A model provider and the wire API it speaks. ``baseUrl`` ``None`` = the SDK's default.

    ``timeoutSeconds`` bounds one model request; a timeout moves a fallback chain on.
    """

    base_url: BaseUrl | None = None
    api_key: SecretStr | None = None
    api: ProviderApi = "openai-completions"
    timeout_seconds: float | None = Field(default=None, gt=0)
    max_response_bytes: int = Field(default=8_388_608, ge=1024)
    """A provider answer (a body, or a whole stream) longer than this fails the request (D142)."""
    idle_timeout_seconds: float = Field(default=120.0, gt=0)
    """A provider answer that sends nothing for this long fails the request (D142)."""
    models: list[ModelEntry] = Field(default_factory=list)


class ModelsConfig(ConfigModel):
    """``models``: providers by id; agents refer to ``<providerId>/<modelId>``."""

    providers: dict[str, ProviderConfig] = Field(default_factory=dict)

    @field_validator("providers")
    @classmethod
    def _no_slash_in_id(cls, value: dict[str, ProviderConfig]) -> dict[str, ProviderConfig]:
        for provider_id in value:
            if not provider_id.strip() or "/" in provider_id:
                raise ValueError(f"provider id {provider_id!r} must be non-empty without '/'")
        return value

    def has_model(self, ref: str) -> bool:
        """True when ``provider/model`` names a provider here that lists that model.

        A provider with an empty ``models`` list accepts any model id.
        """
        provider_id, _, model_id = ref.partition("/")
        provider = self.providers.get(provider_id)
        if provider is None or not model_id:
            return False
        return not provider.models or any(m.id == model_id for m in provider.models)


# --- agents --------------------------------------------------------------------------------


class SandboxConfig(ConfigModel):
    """Which sessions are sandboxed (D10) and what sandboxed session tools may see (R2.0)."""

    mode: Literal["off", "non-main", "all"] = "off"
    session_tools_visibility: Literal["spawned", "all"] = "spawned"


class DefaultSubagentsConfig(ConfigModel):
    """``agents.defaults.subagents``: model fallback for spawns (R4.4) and the sweeper (D7)."""

    model: ModelRef | None = None
    archive_after_minutes: int = Field(default=60, ge=1)
    max_concurrent: int = Field(default=8, ge=1)


class MediaConfig(ConfigModel):
    """``agents.defaults.media``: inbound attachments."""

    max_image_bytes: int = Field(default=10 * 1024 * 1024, ge=0)
    """Larger images reach the model only as a placeholder naming them."""
    max_upload_bytes: int = Field(default=25 * 1024 * 1024, ge=0)
    """The largest file (or recording) the web chat takes in an upload (D154); images are held
    to `maxImageBytes` there too."""


class CompactionConfig(ConfigModel):
    """``agents.defaults.compaction`` (D71): long conversations are summarised, not forgotten."""

    mode: Literal["summary", "off"] = "summary"
    max_context_messages: int = Field(default=40, ge=2)
    """Messages after the latest summary that a turn's context may hold before it compacts."""
    keep_recent: int = Field(default=20, ge=1)
    """Messages a compaction keeps as they are (the rest become the summary)."""

    @model_validator(mode="after")
    def _keep_fewer(self) -> CompactionConfig:
        if self.keep_recent >= self.max_context_messages:
            raise ValueError("keepRecent must be below maxContextMessages")
        return self


class AgentDefaultsConfig(ConfigModel):
    """``agents.defaults``: applies to every agent unless the agent entry overrides it."""

    model: ModelRef | None = None
    system_prompt: str | None = None
    timeout_seconds: int = Field(default=600, ge=1)
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    subagents: DefaultSubagentsConfig = Field(default_factory=DefaultSubagentsConfig)
    media: MediaConfig = Field(default_factory=MediaConfig)
    compaction: CompactionConfig = Field(default_factory=CompactionConfig)


class AgentSubagentsConfig(ConfigModel):
    """Per-agent spawn settings: which agents it may spawn as, and their model (R4.4)."""

    allow_agents: list[str] = Field(default_factory=list)
    model: ModelRef | None = None


class ToolPolicyConfig(ConfigModel):
    """A tool policy; ``allow`` ``None`` = no allow-list (everything not denied). Deny wins."""

    allow: list[str] | None = None
    deny: list[str] = Field(default_factory=list)


class AgentConfig(ConfigModel):
    """One ``agents.list[]`` entry. ``id`` is normalised as in spec R1.2."""

    id: str
    name: str | None = None
    default: bool = False
    model: ModelRef | None = None
    system_prompt: str | None = None
    subagents: AgentSubagentsConfig = Field(default_factory=AgentSubagentsConfig)
    tools: ToolPolicyConfig = Field(default_factory=ToolPolicyConfig)
    mcp: list[str] | None = None
    """MCP servers (names under ``mcp.servers``) this agent may use; ``None`` = all of them."""

    @field_validator("id", mode="before")
    @classmethod
    def _normalise_id(cls, value: Any) -> Any:
        if isinstance(value, str):
            if not value.strip():
                raise ValueError("agent id must not be empty")
            return normalize_agent_id(value)
        return value


# ``list`` is also the field name below; an alias keeps the builtin usable in annotations.
_AgentList = list[AgentConfig]


class AgentsConfig(ConfigModel):
    """``agents``: shared defaults plus the configured agents (none → one implicit ``main``)."""

    defaults: AgentDefaultsConfig = Field(default_factory=AgentDefaultsConfig)
    list: _AgentList = Field(default_factory=lambda: [])

    @field_validator("list")
    @classmethod
    def _unique_ids(cls, entries: _AgentList) -> _AgentList:
        seen: dict[str, int] = {}
        for index, entry in enumerate(entries):
            if entry.id in seen:
                raise ValueError(
                    f"duplicate agent id {entry.id!r} (entries {seen[entry.id]} and {index})",
                )
            seen[entry.id] = index
        return entries
