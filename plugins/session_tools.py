"""The session tools pack: sessions_list, sessions_history (and the rest as they land)."""

from __future__ import annotations

from dataclasses import dataclass

from core.tools import (
    agents_list,
    sessions_history,
    sessions_list,
    sessions_send,
    sessions_spawn,
)
from plugins import PluginAPI


@dataclass(frozen=True)
class SessionToolsPlugin:
    name: str = "session-tools"

    def register(self, api: PluginAPI) -> None:
        for spec in (sessions_list.SPEC, sessions_history.SPEC, sessions_send.SPEC,
                     sessions_spawn.SPEC, agents_list.SPEC):
            api.register_tool(spec)


PLUGIN = SessionToolsPlugin()
