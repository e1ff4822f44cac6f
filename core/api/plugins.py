"""What a plugin imports: ``from core.api.plugins import CommandSpec, OWNER, …`` (D24).

A plugin is a Python package with an entry point in the ``crosstalk.plugins`` group that names
one ``register(ctx: PluginContext)`` function; the built-in plugins use the same names. This
module is the registration surface (tools, commands, their environments, permissions, errors
and argument/result helpers); :mod:`core.api.sessions` holds the session vocabulary and
:mod:`core.api.testing` the test doubles.
"""

from core.features.access.limits import person_key
from core.features.access.policy import guarded_channels
from core.features.commands.parse import (
    SEND_USAGE,
    ParsedCommand,
    is_send_command,
    parse_send_mode,
    send_set_text,
)
from core.features.commands.registry import CommandEnv, CommandInvocation, CommandSpec, ErrorHook
from core.features.extension.context import PluginContext
from core.features.inbound.pipeline import Inbound, InboundStep, Proceed
from core.features.services import PluginServices, Services, SessionStore
from core.features.tools.args import ToolArgs, floor_clamp, required_text
from core.features.tools.env import ToolEnv
from core.features.tools.registry import Payload, ToolSpec
from core.features.tools.results import Json, ToolResult
from core.features.tools.rows import RowBuilder
from core.model.errors import SendBlocked, ToolError, ToolInputError, ToolRefused
from core.model.media import MediaItem, WithMedia
from core.model.permission import EVERYONE, OWNER, Caller, Permission
from core.model.tool_context import ToolContext
from core.model.validation import validation_message

__all__ = [
    "EVERYONE",
    "OWNER",
    "SEND_USAGE",
    "Caller",
    "CommandEnv",
    "CommandInvocation",
    "CommandSpec",
    "ErrorHook",
    "Inbound",
    "InboundStep",
    "Json",
    "MediaItem",
    "ParsedCommand",
    "Payload",
    "Permission",
    "PluginContext",
    "PluginServices",
    "Proceed",
    "RowBuilder",
    "SendBlocked",
    "Services",
    "SessionStore",
    "ToolArgs",
    "ToolContext",
    "ToolEnv",
    "ToolError",
    "ToolInputError",
    "ToolRefused",
    "ToolResult",
    "ToolSpec",
    "WithMedia",
    "floor_clamp",
    "guarded_channels",
    "is_send_command",
    "parse_send_mode",
    "person_key",
    "required_text",
    "send_set_text",
    "validation_message",
]
