"""The `cron` tool's results, dumped to the documented camelCase shapes (D33, D15)."""

from __future__ import annotations

from typing import Literal

from core.api.plugins import Json, ToolResult


class CronJobResult(ToolResult):
    """`cron` add: the job as the HTTP API shows it (`job` is that wire dict)."""

    status: Literal["ok"] = "ok"
    job: Json


class CronListResult(ToolResult):
    count: int
    jobs: list[Json]


class CronRemoveResult(ToolResult):
    status: Literal["ok"] = "ok"
    removed: str


__all__ = ["CronJobResult", "CronListResult", "CronRemoveResult"]
