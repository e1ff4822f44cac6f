"""What a plugin's ``register(ctx)`` receives: the registration surface, nothing more.

The built-in plugins (session tools, chat commands, cron tools) register through this same
context as a third-party package does. A plugin adds tools and commands and may replace the
command error hook; it does not get the runtime.
"""

from __future__ import annotations

from typing import Any

from core.features.commands.registry import CommandRegistry, CommandSpec, ErrorHook
from core.features.tools.registry import ToolRegistry, ToolSpec


class PluginContext:
    """Registration API handed to one plugin (``name`` is its entry-point name)."""

    def __init__(
        self,
        name: str,
        *,
        tools: ToolRegistry,
        commands: CommandRegistry,
        options: dict[str, Any] | None = None,
    ) -> None:
        self.name = name
        self._tools = tools
        self._commands = commands
        self.options: dict[str, Any] = dict(options or {})
        """This plugin's slice of the config: ``plugins.options.<name>`` (free-form)."""

    def register_tool(self, spec: ToolSpec) -> None:
        self._tools.register(spec)

    def register_command(self, spec: CommandSpec) -> None:
        self._commands.register(spec)

    def set_command_error_hook(self, hook: ErrorHook) -> None:
        """Replace how every command's failure is reported (the last plugin to set it wins)."""
        self._commands.set_error_hook(hook)


__all__ = ["PluginContext"]
