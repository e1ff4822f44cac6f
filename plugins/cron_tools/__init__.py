"""The cron pack: the agent tool `cron` (reminders and scheduled tasks, D15)."""

from __future__ import annotations

from core.api.plugins import PluginContext
from plugins.cron_tools import cron_tool


def register(ctx: PluginContext) -> None:
    ctx.register_tool(cron_tool.SPEC)
