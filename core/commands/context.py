"""What a chat command's handler may use: the command environment (D30).

A handler gets a :class:`~core.commands.registry.CommandInvocation` whose ``env`` is a
:class:`CommandEnv`: the sessions façade of :class:`core.services.Services` plus the cron
service, the sub-agent registry, the pairing service and the command registry (for `/help`).
The router receives one, built by the runtime; tests build one from real parts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.services import CoreServices

if TYPE_CHECKING:
    from core.access.pairing import PairingService
    from core.commands.registry import CommandRegistry
    from core.cron.service import CronService
    from core.subagents.registry import SubagentRegistry


@dataclass(frozen=True, slots=True)
class CommandEnv(CoreServices):
    cron: CronService
    subagents: SubagentRegistry
    pairing: PairingService
    commands: CommandRegistry


__all__ = ["CommandEnv"]
