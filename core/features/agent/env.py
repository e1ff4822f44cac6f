"""What the turn executor uses, as a protocol (D30): the model stack, the store, the tools.

:class:`core.features.agent.turn.PydanticAITurnExecutor` is typed against :class:`TurnEnv`, never
the runtime; the runtime satisfies it. `tool_env` is what a tool call made by the model gets.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from core.config import CrosstalkConfig
    from core.engine.observability.metrics import Metrics
    from core.engine.outbound.channels import ChannelRegistry
    from core.features.mcp.client import McpClients
    from core.features.models.resolver import ModelResolver
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

    def tool_names_for(self, session_key: str, agent_id: str) -> list[str]: ...


__all__ = ["TurnEnv"]
