"""What a chat command's handler may use: the command environment (D30).

A handler gets a :class:`~core.features.commands.registry.CommandInvocation` whose ``env`` is a
:class:`CommandEnv`: the sessions façade of :class:`core.features.services.PluginServices` plus the
cron service, the sub-agent registry, the pairing service and the command registry (for `/help`).
The router receives a :class:`CommandServices`, built by the runtime; tests build one from real
parts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from core.features.services import CoreServices, PluginServices

if TYPE_CHECKING:
    from core.features.access.pairing import PairingService
    from core.features.commands.registry import CommandRegistry
    from core.features.cron.service import CronService
    from core.features.subagents.registry import SubagentRegistry


class CommandEnv(PluginServices, Protocol):
    """The protocol handlers are typed against."""

    @property
    def cron(self) -> CronService: ...
    @property
    def subagents(self) -> SubagentRegistry: ...
    @property
    def pairing(self) -> PairingService: ...
    @property
    def commands(self) -> CommandRegistry: ...


@dataclass(frozen=True, slots=True)
class CommandServices(CoreServices):
    """The concrete :class:`CommandEnv` the runtime hands the router."""

    cron: CronService
    subagents: SubagentRegistry
    pairing: PairingService
    commands: CommandRegistry


__all__ = ["CommandEnv", "CommandServices"]
