"""The session tools' results, dumped to the documented camelCase shapes (D33).

Shapes: /work/shared/spec/session-tools.md and D2–D4; a row is
:class:`core.features.tools.results.SessionRow`.
"""

from __future__ import annotations

from typing import Literal

from core.api.plugins import Json, ToolResult


class SessionsListResult(ToolResult):
    count: int
    sessions: list[Json]
    """Rows in the shape of :class:`SessionRow`."""


class SessionsHistoryResult(ToolResult):
    session_key: str
    messages: list[Json]
    truncated: Literal[True] | None = None


class SearchResultRow(ToolResult):
    session_key: str
    message_id: int
    role: str
    timestamp: int
    excerpt: str


class SessionsSearchResult(ToolResult):
    """D66: best match first, then newest."""

    count: int
    results: list[SearchResultRow]


class SessionStatusResult(ToolResult):
    """D67's shape; `route` is null when the session has no route yet."""

    session_key: str
    kind: str
    channel: str
    agent_id: str
    model: str | None
    status: Literal["idle", "running"]
    queued: int
    send_policy: Json
    route: Json | None
    tokens: Json
    cost_usd: float
    created_at: int
    updated_at: int
    subagents: Json

    def payload(self) -> Json:
        out = super().payload()
        out.setdefault("route", None)  # D67: null, not absent
        out.setdefault("model", None)
        return out


class SubagentRow(ToolResult):
    run_id: str
    child_session_key: str
    label: str | None
    task: str
    status: Literal["running", "ok", "error", "timeout", "aborted"]
    started_at: int
    ended_at: int | None

    def payload(self) -> Json:
        return self.model_dump(by_alias=True)  # D68: label and endedAt null, not absent


class SubagentsListResult(ToolResult):
    count: int
    subagents: list[SubagentRow]

    def payload(self) -> Json:
        return {"count": self.count, "subagents": [r.payload() for r in self.subagents]}


class SubagentsCancelResult(ToolResult):
    status: Literal["ok"] = "ok"
    run_id: str


class SessionsSendResult(ToolResult):
    """`accepted` (the exchange goes on in the background), `ok`, `timeout` or `error`."""

    run_id: str
    status: Literal["accepted", "ok", "timeout", "error"]
    error: str | None = None
    reply: str | None = None
    session_key: str
    delivery: Json | None = None


class SessionsSendModeResult(ToolResult):
    """D70: `{status: "ok", mode: "notify"}`, `{status: "accepted", mode: "steer", runId}`."""

    status: Literal["ok", "accepted"]
    mode: Literal["notify", "steer"]
    run_id: str | None = None


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


__all__ = [
    "AgentRow",
    "AgentsListResult",
    "SearchResultRow",
    "SessionStatusResult",
    "SessionsHistoryResult",
    "SessionsListResult",
    "SessionsSearchResult",
    "SessionsSendModeResult",
    "SessionsSendResult",
    "SessionsSpawnResult",
    "SubagentRow",
    "SubagentsCancelResult",
    "SubagentsListResult",
]
