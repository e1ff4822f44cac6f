"""What a plugin's ``register(ctx)`` receives: the registration surface, nothing more.

The built-in plugins (session tools, chat commands, cron tools) register through this same
context as a third-party package does. A plugin adds tools, commands and inbound steps and may
replace the command error hook; it does not get the runtime.
"""

from __future__ import annotations

from typing import Any

from core.features.commands.registry import CommandRegistry, CommandSpec, ErrorHook
from core.features.inbound.pipeline import InboundStep, InboundSteps
from core.features.tools.registry import ToolRegistry, ToolSpec


class PluginContext:
    """Registration API handed to one plugin (``name`` is its entry-point name)."""

    def __init__(
        self,
        name: str,
        *,
        tools: ToolRegistry,
        commands: CommandRegistry,
        inbound: InboundSteps | None = None,
        options: dict[str, Any] | None = None,
    ) -> None:
        self.name = name
        self._tools = tools
        self._commands = commands
        self._inbound = inbound
        self.options: dict[str, Any] = dict(options or {})
        """This plugin's slice of the config: ``plugins.options.<name>`` (free-form)."""

    def register_tool(self, spec: ToolSpec) -> None:
        self._tools.register(spec)

    def register_command(self, spec: CommandSpec) -> None:
        self._commands.register(spec)

    def add_inbound_step(
        self, step: InboundStep, *, before: str | None = None, after: str | None = None
    ) -> None:
        """Put a step into the inbound pipeline right before or after a named one (D98): the
        built-ins are dedup, admission, route, command, mention, policy, run."""
        if self._inbound is None:
            raise RuntimeError("this plugin context has no inbound pipeline")
        self._inbound.insert(step, before=before, after=after)

    def set_command_error_hook(self, hook: ErrorHook) -> None:
        """Replace how every command's failure is reported (the last plugin to set it wins)."""
        self._commands.set_error_hook(hook)


__all__ = ["PluginContext"]
