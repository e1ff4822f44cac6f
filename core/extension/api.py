"""What a plugin imports: ``from core.extension.api import CommandSpec, OWNER, …``.

A plugin is a Python package with an entry point in the ``crosstalk.plugins`` group that names
one ``register(ctx: PluginContext)`` function; the built-in plugins use the same names.
"""

from core.commands.context import CommandEnv
from core.commands.registry import CommandInvocation, CommandSpec, ErrorHook
from core.errors import ToolRefused
from core.extension.context import PluginContext
from core.extension.permission import EVERYONE, OWNER, Caller, Permission
from core.services import PluginServices, Services, SessionStore
from core.tools.context import ToolContext
from core.tools.env import ToolEnv
from core.tools.registry import Payload, ToolSpec

__all__ = [
    "EVERYONE",
    "OWNER",
    "Caller",
    "CommandEnv",
    "CommandInvocation",
    "CommandSpec",
    "ErrorHook",
    "Payload",
    "Permission",
    "PluginContext",
    "PluginServices",
    "Services",
    "SessionStore",
    "ToolContext",
    "ToolEnv",
    "ToolRefused",
    "ToolSpec",
]
