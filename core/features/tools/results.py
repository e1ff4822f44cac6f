"""Typed tool results, dumped to the documented camelCase shapes (D33).

A handler may return a :class:`ToolResult`; the registry turns it into the JSON payload with
``model_dump(by_alias=True, exclude_none=True)``: snake_case fields become camelCase keys, in
declaration order, and absent (None) fields are left out, as the hand-built payloads did. Raw
JSON carried through (transcript messages, cron jobs) stays a plain dict, whose own nulls are
kept. The built-in tools' own results live with them (plugins.session_tools.results,
plugins.cron_tools.results); a session row stays here because `GET /sessions/{key}` shows it too.
Shapes: /work/shared/spec/session-tools.md and D2–D4, D15.
"""

from __future__ import annotations

from typing import Any

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

    The schema of a row: core.features.tools.rows builds rows as dicts on the hot path, and the
    tests check that every row validates against this model and dumps back unchanged."""

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


__all__ = ["DeliveryTarget", "Json", "SessionRow", "ToolResult"]
