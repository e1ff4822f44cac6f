"""Owner chat commands: /send, /status, /new, /stop, /pair, /cron, /help."""

from __future__ import annotations

from dataclasses import dataclass

from plugins import PluginAPI
from plugins.chat_commands import cron, pair, send, session, subagents
from plugins.chat_commands import help as help_cmd


@dataclass(frozen=True)
class ChatCommandsPlugin:
    name: str = "chat-commands"

    def register(self, api: PluginAPI) -> None:
        for spec in (send.SPEC, *session.SPECS, subagents.SPEC, pair.SPEC, cron.SPEC,
                     help_cmd.SPEC):
            api.register_command(spec)


PLUGIN = ChatCommandsPlugin()
