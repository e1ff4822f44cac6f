"""What a plugin imports: ``from core.api.plugins import CommandSpec, OWNER, …``.

A plugin is a Python package with an entry point in the ``crosstalk.plugins`` group that names
one ``register(ctx: PluginContext)`` function; the built-in plugins use the same names.
"""

from core.features.commands.context import CommandEnv
from core.features.commands.registry import CommandInvocation, CommandSpec, ErrorHook
from core.features.extension.context import PluginContext
from core.features.services import PluginServices, Services, SessionStore
from core.features.tools.env import ToolEnv
from core.features.tools.registry import Payload, ToolSpec
from core.model.errors import ToolRefused
from core.model.permission import EVERYONE, OWNER, Caller, Permission
from core.model.tool_context import ToolContext

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
