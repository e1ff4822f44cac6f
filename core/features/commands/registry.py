"""Chat commands (`/send`, `/status`, …): registered by plugins, answered through the gate.

The registry is the one place that enforces who may run a command (the spec's
:class:`~core.model.permission.Permission`, checked before the handler runs) and the one
place that turns a failing handler into a reply (a replaceable error hook).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from core.features.commands.parse import ParsedCommand
from core.features.services import PluginServices
from core.model.inbound import InboundMessage
from core.model.permission import EVERYONE, OWNER, Caller, Permission
from core.model.roles import Role
from core.store import SessionEntry

if TYPE_CHECKING:
    from core.features.access.identities import Identities
    from core.features.access.limits import Limits
    from core.features.access.pairing import PairingService
    from core.features.approvals import ApprovalService
    from core.features.cron.service import CronService
    from core.features.subagents.registry import SubagentRegistry

log = logging.getLogger(__name__)


class CommandEnv(PluginServices, Protocol):
    """What a command handler may use (D30): the sessions façade of
    :class:`core.features.services.PluginServices` plus the cron service, the sub-agent
    registry, the pairing service, the command registry (for `/help`) and approvals (D72)."""

    @property
    def cron(self) -> CronService: ...
    @property
    def subagents(self) -> SubagentRegistry: ...
    @property
    def pairing(self) -> PairingService: ...
    @property
    def commands(self) -> CommandRegistry: ...
    @property
    def limits(self) -> Limits: ...
    @property
    def identities(self) -> Identities: ...
    @property
    def approvals(self) -> ApprovalService: ...


@dataclass(frozen=True, slots=True)
class CommandInvocation:
    """One command as typed by someone, with the runtime's view of who they are, and the
    environment its handler may use (never the runtime, D30)."""

    env: CommandEnv
    command: ParsedCommand
    message: InboundMessage
    entry: SessionEntry
    is_owner: bool
    role: Role | None = None
    """The sender's role (D60); None: owner when `is_owner`, else guest."""
    person_id: str | None = None
    """The sender's linked person (D65), when linked."""

    @property
    def sender_role(self) -> Role:
        return self.caller.effective_role

    @property
    def caller(self) -> Caller:
        return Caller(
            is_owner=self.is_owner,
            session_key=self.entry.key,
            channel=self.message.channel,
            sender_id=self.message.sender_id,
            role=self.role,
        )


CommandHandler = Callable[[CommandInvocation], Awaitable[str | None]]
CommandMatcher = Callable[[ParsedCommand], bool]
ErrorHook = Callable[[CommandInvocation, Exception], Awaitable[str | None]]


@dataclass(frozen=True, slots=True)
class CommandSpec:
    name: str
    description: str
    handler: CommandHandler
    permission: Permission = EVERYONE
    """Checked by the registry before `handler` runs; handlers never check roles."""
    usage: str | None = None
    matches: CommandMatcher | None = None
    """Extra check on the arguments; when False the text is a normal message (`/send on please`)."""
    owner_only: bool = False
    """Shorthand kept for older plugins: ``owner_only=True`` means ``permission=OWNER``."""

    def __post_init__(self) -> None:
        if self.owner_only and self.permission is EVERYONE:
            object.__setattr__(self, "permission", OWNER)
        object.__setattr__(self, "owner_only", self.permission is OWNER)


async def default_error_hook(inv: CommandInvocation, exc: Exception) -> str | None:
    """Log the failure and tell the sender the command failed (its text, never a traceback)."""
    log.error("command /%s failed", inv.command.name, exc_info=exc)
    return f"⚠️ /{inv.command.name} failed: {exc}"


class CommandRegistry:
    def __init__(self) -> None:
        self._commands: dict[str, CommandSpec] = {}
        self.error_hook: ErrorHook = default_error_hook

    def register(self, spec: CommandSpec) -> None:
        if spec.name in self._commands:
            raise ValueError(f"command already registered: /{spec.name}")
        self._commands[spec.name] = spec

    def set_error_hook(self, hook: ErrorHook) -> None:
        """Replace how command failures are reported (one hook for every command)."""
        self.error_hook = hook

    def lookup(self, parsed: ParsedCommand) -> CommandSpec | None:
        spec = self._commands.get(parsed.name)
        if spec is None or (spec.matches is not None and not spec.matches(parsed)):
            return None
        return spec

    def visible(
        self, caller: Caller | None = None, *, is_owner: bool | None = None
    ) -> list[CommandSpec]:
        """The commands `caller` may run (``is_owner=`` alone: an anonymous caller, as the web
        chat's command list asks)."""
        if caller is None:
            caller = Caller(is_owner=bool(is_owner), session_key="")
        return [c for c in self._commands.values() if c.permission.allows(caller)]

    async def dispatch(self, spec: CommandSpec, inv: CommandInvocation) -> str | None:
        """The reply to `inv`: the refusal if the caller lacks the permission (the handler does
        not run), else the handler's reply, else what the error hook makes of its failure."""
        refusal = spec.permission.refusal(inv.caller, spec.name)
        if refusal is not None:
            return refusal
        try:
            return await spec.handler(inv)
        except Exception as exc:
            return await self.error_hook(inv, exc)
