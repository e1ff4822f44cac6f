"""Typed results of the built-in tools, dumped to the documented camelCase shapes (D33).

A handler may return a :class:`ToolResult`; the registry turns it into the JSON payload with
``model_dump(by_alias=True, exclude_none=True)``: snake_case fields become camelCase keys, in
declaration order, and absent (None) fields are left out, as the hand-built payloads did. Raw
JSON carried through (transcript messages, cron jobs) stays a plain dict, whose own nulls are
kept. Shapes: /work/shared/spec/session-tools.md and D2–D4, D15.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

Json = dict[str, Any]


class ToolResult(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    def payload(self) -> Json:
        return self.model_dump(by_alias=True, exclude_none=True)


class DeliveryTarget(ToolResult):
    channel: str | None = None
    to: str | None = None
    account_id: str | None = None


class SessionRow(ToolResult):
    """One session as sessions_list (and `GET /sessions/{key}`) shows it.

    The schema of a row: core.tools.rows builds rows as dicts on the hot path, and the tests
    check that every row validates against this model and dumps back unchanged."""

    key: str
    kind: str
    channel: str
    label: str | None = None
    display_name: str | None = None
    updated_at: int | None = None
    session_id: str
    model: str | None = None
    context_tokens: int | None = None
    total_tokens: int | None = None
    cost_usd: int | float | None = None  # int stays int: the JSON must not change
    thinking_level: str | None = None
    verbose_level: str | None = None
    system_sent: bool | None = None
    aborted_last_run: bool | None = None
    send_policy: str | None = None
    spawned_by: str | None = None
    transcript_path: str
    last_channel: str | None = None
    last_to: str | None = None
    last_account_id: str | None = None
    delivery_context: DeliveryTarget | None = None
    messages: list[Json] | None = None


class SessionsListResult(ToolResult):
    count: int
    sessions: list[Json]
    """Rows in the shape of :class:`SessionRow`."""


class SessionsHistoryResult(ToolResult):
    session_key: str
    messages: list[Json]
    truncated: Literal[True] | None = None


class SessionsSendResult(ToolResult):
    """`accepted` (the exchange goes on in the background), `ok`, `timeout` or `error`."""

    run_id: str
    status: Literal["accepted", "ok", "timeout", "error"]
    error: str | None = None
    reply: str | None = None
    session_key: str
    delivery: Json | None = None


class SessionsSpawnResult(ToolResult):
    status: Literal["accepted"] = "accepted"
    child_session_key: str
    run_id: str
    model_applied: Literal[True] | None = None


class AgentRow(ToolResult):
    id: str
    name: str | None = None
    configured: bool


class AgentsListResult(ToolResult):
    requester: str
    allow_any: bool
    agents: list[AgentRow]


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


__all__ = ["AgentRow", "AgentsListResult", "CronJobResult", "CronListResult",
           "CronRemoveResult", "DeliveryTarget", "SessionRow", "SessionsHistoryResult",
           "SessionsListResult", "SessionsSendResult", "SessionsSpawnResult", "ToolResult"]
