"""Capability packs, registered through the same public API a third-party plugin would use.

A plugin is any object with ``name`` and ``register(api: PluginAPI)``. Built-ins: the session
tools and the owner chat commands.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from core.commands.registry import CommandSpec
from core.tools.registry import ToolSpec

if TYPE_CHECKING:
    from core.runtime import Runtime


class PluginAPI:
    """What a plugin may touch: it adds tools and commands, nothing else."""

    def __init__(self, runtime: Runtime) -> None:
        self._rt = runtime

    def register_tool(self, spec: ToolSpec) -> None:
        self._rt.tools.register(spec)

    def register_command(self, spec: CommandSpec) -> None:
        self._rt.commands.register(spec)


class Plugin(Protocol):
    @property
    def name(self) -> str: ...

    def register(self, api: PluginAPI) -> None: ...


def builtin_plugins() -> list[Plugin]:
    from plugins.chat_commands import PLUGIN as commands
    from plugins.cron_tools import PLUGIN as cron_tools
    from plugins.session_tools import PLUGIN as session_tools

    return [session_tools, commands, cron_tools]


def load_builtin_plugins(runtime: Runtime) -> None:
    api = PluginAPI(runtime)
    for plugin in builtin_plugins():
        plugin.register(api)


__all__ = ["Plugin", "PluginAPI", "builtin_plugins", "load_builtin_plugins"]
