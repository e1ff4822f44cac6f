"""The parts that start runs and deliver their replies, as one protocol: a cluster takeover
(core.engine.cluster.node) and the features (core.features.services) both take them."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import asyncio

    from core.engine.outbound.gate import OutboundGate
    from core.engine.runs.manager import RunManager
    from core.model.delivery_context import DeliveryContext
    from core.model.records import SessionEntry
    from core.model.roles import Role
    from core.model.tool_context import ToolContext


class RunEnv(Protocol):
    """The outbound gate, the run manager, background jobs and the tool context of a run."""

    @property
    def gate(self) -> OutboundGate: ...
    @property
    def runs(self) -> RunManager: ...

    def spawn(self, coro: Awaitable[object]) -> asyncio.Task[object]: ...
    def context_for(
        self,
        entry: SessionEntry,
        *,
        via: str = "agent",
        origin: DeliveryContext | None = None,
        role: Role = "owner",
    ) -> ToolContext: ...
