"""What the turn executor uses (D30, D97): the model stack, the store, the tools.

:class:`core.features.agent.turn.PydanticAITurnExecutor` is typed against :class:`TurnEnv`, never
the runtime; the runtime builds a :class:`TurnServices`. `tool_env` is what a tool call made by
the model gets.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from core.features.tools.availability import tool_names_for

if TYPE_CHECKING:
    from core.config import CrosstalkConfig
    from core.engine.observability.metrics import Metrics
    from core.engine.outbound.channels import ChannelRegistry
    from core.features.access.limits import Limits
    from core.features.mcp.client import McpClients
    from core.features.models.resolver import ModelResolver
    from core.features.models.warmup import ModelWarmup
    from core.features.tools.env import ToolEnv
    from core.features.tools.registry import ToolRegistry
    from core.store import Store


class TurnEnv(Protocol):
    @property
    def config(self) -> CrosstalkConfig: ...
    @property
    def models(self) -> ModelResolver: ...
    @property
    def metrics(self) -> Metrics: ...
    @property
    def store(self) -> Store: ...
    @property
    def mcp(self) -> McpClients: ...
    @property
    def channels(self) -> ChannelRegistry: ...
    @property
    def tools(self) -> ToolRegistry: ...
    @property
    def tool_env(self) -> ToolEnv: ...
    @property
    def warmup(self) -> asyncio.Task[object] | None:
        """The model-stack import running at start; a turn waits for it rather than race it."""

    @property
    def limits(self) -> Limits: ...

    def tool_names_for(self, session_key: str, agent_id: str) -> list[str]: ...


@dataclass(frozen=True, slots=True)
class TurnServices:
    """The concrete :class:`TurnEnv` the runtime builds.

    `tool_env_of` returns the tools' environment: that environment holds the run manager this
    executor runs in, so the runtime builds it after the executor and hands it over as a
    callable (the one cycle of the wiring: tools start runs, D97)."""

    config: CrosstalkConfig
    models: ModelResolver
    metrics: Metrics
    store: Store
    mcp: McpClients
    channels: ChannelRegistry
    tools: ToolRegistry
    warm: ModelWarmup
    tool_env_of: Callable[[], ToolEnv]
    limits: Limits

    @property
    def tool_env(self) -> ToolEnv:
        return self.tool_env_of()

    @property
    def warmup(self) -> asyncio.Task[object] | None:
        return self.warm.task

    def tool_names_for(self, session_key: str, agent_id: str) -> list[str]:
        return tool_names_for(self.config, self.tools, session_key, agent_id)


__all__ = ["TurnEnv", "TurnServices"]
