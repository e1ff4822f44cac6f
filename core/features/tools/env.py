"""What a tool handler gets besides its arguments and caller: the tool environment.

Handlers are ``async def handler(env: ToolEnv, ctx: ToolContext, args) -> Payload``. The
environment is the sessions façade of :class:`core.features.services.PluginServices` plus what
tools own: the cron service, the sub-agent registry and the sessions_send rate limiter. The
runtime builds a :class:`ToolServices`; tests build one from real parts without a runtime (D30).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from core.features.services import CoreServices, PluginServices

if TYPE_CHECKING:
    from core.features.cron.service import CronService
    from core.features.subagents.registry import SubagentRegistry
    from core.model.send_limits import SendRateLimiter


class ToolEnv(PluginServices, Protocol):
    """The protocol handlers are typed against (the HTTP and MCP edges may pass the runtime)."""

    @property
    def cron(self) -> CronService: ...
    @property
    def subagents(self) -> SubagentRegistry: ...
    @property
    def send_limiter(self) -> SendRateLimiter: ...


@dataclass(frozen=True, slots=True)
class ToolServices(CoreServices):
    """The concrete :class:`ToolEnv` the runtime hands the tool registry."""

    cron: CronService
    subagents: SubagentRegistry
    send_limiter: SendRateLimiter


__all__ = ["ToolEnv", "ToolServices"]
