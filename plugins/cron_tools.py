"""The cron pack: the agent tool `cron` (reminders and scheduled tasks, D15)."""

from __future__ import annotations

from dataclasses import dataclass

from core.tools import cron_tool
from plugins import PluginAPI


@dataclass(frozen=True)
class CronToolsPlugin:
    name: str = "cron-tools"

    def register(self, api: PluginAPI) -> None:
        api.register_tool(cron_tool.SPEC)


PLUGIN = CronToolsPlugin()
