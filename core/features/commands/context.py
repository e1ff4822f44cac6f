"""The concrete command environment the runtime hands the router (D30).

A handler gets a :class:`~core.features.commands.registry.CommandInvocation` whose ``env`` is a
:class:`~core.features.commands.registry.CommandEnv`; :class:`CommandServices` is the one the
runtime builds from its parts (tests build one from real parts).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.features.services import CoreServices

if TYPE_CHECKING:
    from core.features.access.identities import Identities
    from core.features.access.limits import Limits
    from core.features.access.pairing import PairingService
    from core.features.approvals import ApprovalService
    from core.features.commands.registry import CommandRegistry
    from core.features.cron.service import CronService
    from core.features.subagents.registry import SubagentRegistry


@dataclass(frozen=True, slots=True)
class CommandServices(CoreServices):
    """The concrete :class:`CommandEnv` the runtime hands the router."""

    cron: CronService
    subagents: SubagentRegistry
    pairing: PairingService
    commands: CommandRegistry
    limits: Limits
    identities: Identities
    approvals: ApprovalService


__all__ = ["CommandServices"]
