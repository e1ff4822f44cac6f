"""Light value types the store hands out (built straight from Core result rows)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal, TypedDict

RunStatus = Literal["queued", "running", "ok", "error", "timeout", "aborted", "limited"]
FINAL_RUN_STATUSES: frozenset[str] = frozenset({"ok", "error", "timeout", "aborted", "limited"})


@dataclass(slots=True)
class SessionEntry:
    key: str
    session_id: str
    agent_id: str
    kind: str
    created_at: int
    updated_at: int
    channel: str | None = None
    chat_type: str | None = None
    label: str | None = None
    display_name: str | None = None
    spawned_by: str | None = None
    model: str | None = None
    context_tokens: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    cost_usd: float | None = None
    thinking_level: str | None = None
    verbose_level: str | None = None
    system_sent: bool | None = None
    aborted_last_run: bool | None = None
    send_policy: str | None = None
    last_channel: str | None = None
    last_to: str | None = None
    last_account_id: str | None = None
    last_thread_id: str | None = None
    reset_at: int | None = None
    """When `/new` (or a reset over HTTP) last gave the key a new transcript; None: never."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


SESSION_FIELDS: frozenset[str] = frozenset(f.name for f in fields(SessionEntry))


class SessionPatch(TypedDict, total=False):
    """The session fields a write may set (D96): a typed patch, checked by mypy at every call
    and, for fields from outside (HTTP, tools), by the store."""

    session_id: str
    """A new transcript for the same key (`/new`)."""
    updated_at: int
    channel: str | None
    chat_type: str | None
    label: str | None
    display_name: str | None
    spawned_by: str | None
    model: str | None
    context_tokens: int | None
    input_tokens: int | None
    output_tokens: int | None
    total_tokens: int | None
    cost_usd: float | None
    thinking_level: str | None
    verbose_level: str | None
    system_sent: bool | None
    aborted_last_run: bool | None
    send_policy: str | None
    last_channel: str | None
    last_to: str | None
    last_account_id: str | None
    last_thread_id: str | None
    reset_at: int | None


NOTICE = "notice"
"""`meta` key of an assistant message the gateway said itself (no model configured, D132):
shown and kept, never part of a model's context."""


@dataclass(slots=True)
class TranscriptMessage:
    """A transcript message in the wire format of decision D3."""

    role: Literal["user", "assistant", "toolResult", "summary"]
    content: list[dict[str, Any]]
    timestamp: int
    tool_call_id: str | None = None
    tool_name: str | None = None
    is_error: bool | None = None
    run_id: str | None = None
    meta: dict[str, Any] | None = None
    id: int | None = None
    seq: int | None = None
    """Place in the transcript; None while the message waits for its turn (D13)."""

    @classmethod
    def text(
        cls, role: Literal["user", "assistant"], text: str, timestamp: int, **kw: Any
    ) -> TranscriptMessage:
        return cls(role=role, content=[{"type": "text", "text": text}], timestamp=timestamp, **kw)

    def plain_text(self) -> str:
        return "".join(b.get("text", "") for b in self.content if b.get("type") == "text")

    def to_wire(self) -> dict[str, Any]:
        """JSON shape used by sessions_history, the web chat and transcript files."""
        from core.model.attachments import wire_part

        out: dict[str, Any] = {
            "role": self.role,
            "content": [wire_part(p) for p in self.content],
            "timestamp": self.timestamp,
        }
        if self.role == "toolResult":
            out["toolCallId"] = self.tool_call_id
            out["toolName"] = self.tool_name
            out["isError"] = bool(self.is_error)
        return out


@dataclass(slots=True)
class RunRecord:
    id: str
    session_key: str
    status: str
    lane: str
    deliver: bool
    created_at: int
    input_message_id: int | None = None
    started_at: int | None = None
    ended_at: int | None = None
    error: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    meta: dict[str, Any] | None = None
    owner: str | None = None


class RunPatch(TypedDict, total=False):
    """The run fields a write may set (D96)."""

    status: str
    started_at: int | None
    ended_at: int | None
    error: str | None
    input_tokens: int | None
    output_tokens: int | None
    total_tokens: int | None
    meta: dict[str, Any] | None
    owner: str | None


@dataclass(slots=True)
class TurnWrite:
    """What a finished turn stores: its new transcript rows (placed in order), session fields
    (token counts, cost) and run meta, all committed with the run's final status (D41)."""

    entry: SessionEntry
    messages: list[TranscriptMessage]
    session_fields: SessionPatch = field(default_factory=lambda: SessionPatch())
    run_meta: dict[str, Any] | None = None


@dataclass(slots=True)
class DeliveryRecord:
    kind: str
    outcome: str
    text: str
    created_at: int
    session_key: str | None = None
    reason: str | None = None
    channel: str | None = None
    to: str | None = None
    account_id: str | None = None
    thread_id: str | None = None
    run_id: str | None = None
    attempts: int = 1
    id: int | None = None

    def to_wire(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "sessionKey": self.session_key,
            "kind": self.kind,
            "outcome": self.outcome,
            "reason": self.reason,
            "channel": self.channel,
            "to": self.to,
            "accountId": self.account_id,
            "threadId": self.thread_id,
            "text": self.text,
            "runId": self.run_id,
            "attempts": self.attempts,
            "createdAt": self.created_at,
        }


@dataclass(frozen=True, slots=True)
class DeliveryOrigin:
    """What sent a delivery (D136): its kind, its session and, for a cron or webhook turn, the
    job or hook behind it (read from the run's `meta`), so a chat can say who is speaking."""

    kind: str
    session_key: str | None = None
    source: str | None = None
    run_id: str | None = None
    """The run it speaks for: a failed turn's notice names its turn (D190)."""

    def label(self) -> str | None:
        """How the web chat names a cron job's or a webhook's message; None for the others."""
        if self.kind == "cron":
            return f"⏰ cron job {self.source or '?'}"
        if self.kind == "hook":
            return f"🪝 webhook {self.source or '?'}"
        return None


@dataclass(frozen=True, slots=True)
class SentMedia:
    """An item a delivery sent, without its bytes (D192): what a chat's history names it by.
    `placeholder` is its chunk's text, the line the delivery's logged text names it with."""

    id: str
    kind: str
    name: str
    mime: str
    size: int
    placeholder: str

    def row(self) -> dict[str, Any]:
        """As a web chat history row's `media` names an item (a transcript row's keys)."""
        return {
            "id": self.id,
            "kind": self.kind,
            "name": self.name,
            "mime": self.mime,
            "size": self.size,
        }


@dataclass(frozen=True, slots=True)
class KeptDelivery:
    """A cron or webhook reply kept for a chat (D136), with its origin and the items its media
    chunks sent (D192), in chunk order."""

    record: DeliveryRecord
    origin: DeliveryOrigin
    media: tuple[SentMedia, ...] = ()


@dataclass(slots=True)
class SessionQuery:
    """Filters for listing sessions; all are applied in SQL before `limit` (decision D2)."""

    limit: int | None = None
    kinds: tuple[str, ...] = ()
    agent_ids: tuple[str, ...] | None = None
    agent_patterns: tuple[str, ...] = ()
    updated_since: int | None = None
    spawned_by: str | None = None
    keys: tuple[str, ...] | None = None
    """Only these keys (a role's `self`/`tree` scope, D61); None: any key."""
    include_reserved: bool = False
    exclude_keys: tuple[str, ...] = field(default_factory=tuple)
    channels: tuple[str, ...] = ()
    """The session's channel (its own, else its last route's) is one of these (console)."""
    text: str | None = None
    """Substring of the key, label, display name or session id, any case (console search)."""
