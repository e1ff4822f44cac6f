"""Chat commands (`/send`, `/status`, …): registered by plugins, answered through the gate."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.commands.parse import ParsedCommand
from core.inbound import InboundMessage
from core.store import SessionEntry

if TYPE_CHECKING:
    from core.runtime import Runtime


@dataclass(frozen=True, slots=True)
class CommandInvocation:
    """One command as typed by someone, with the runtime's view of who they are."""

    runtime: Runtime
    command: ParsedCommand
    message: InboundMessage
    entry: SessionEntry
    is_owner: bool


CommandHandler = Callable[[CommandInvocation], Awaitable[str | None]]
CommandMatcher = Callable[[ParsedCommand], bool]


@dataclass(frozen=True, slots=True)
class CommandSpec:
    name: str
    description: str
    handler: CommandHandler
    owner_only: bool = False
    usage: str | None = None
    matches: CommandMatcher | None = None
    """Extra check on the arguments; when False the text is a normal message (`/send on please`)."""


class CommandRegistry:
    def __init__(self) -> None:
        self._commands: dict[str, CommandSpec] = {}

    def register(self, spec: CommandSpec) -> None:
        if spec.name in self._commands:
            raise ValueError(f"command already registered: /{spec.name}")
        self._commands[spec.name] = spec

    def lookup(self, parsed: ParsedCommand) -> CommandSpec | None:
        spec = self._commands.get(parsed.name)
        if spec is None or (spec.matches is not None and not spec.matches(parsed)):
            return None
        return spec

    def visible(self, *, is_owner: bool) -> list[CommandSpec]:
        return [c for c in self._commands.values() if is_owner or not c.owner_only]
