"""The tables behind the store API (sessions, messages, runs, deliveries, sub-agent runs).

The classes describe the schema (and feed Alembic); the hot paths query them through SQLAlchemy
Core and hand out the light value types of :mod:`core.model.records`, because building ORM
objects per row would cost more than the whole `sessions_list` budget.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, BigInteger, Column, Index, Text
from sqlmodel import Field, SQLModel


class SessionRow(SQLModel, table=True):
    """One chat session bucket; `key` is the canonical session key (core.model.keys)."""

    __tablename__ = "sessions"
    __table_args__ = (
        Index("ix_sessions_updated", "updated_at"),
        Index("ix_sessions_agent_updated", "agent_id", "updated_at"),
        Index("ix_sessions_kind_updated", "kind", "updated_at"),
        Index("ix_sessions_spawned_by", "spawned_by"),
        Index("ix_sessions_label", "label"),
        Index("ix_sessions_route", "last_channel", "last_to"),  # a chat's sessions (D177)
    )

    key: str = Field(primary_key=True, max_length=512)
    session_id: str = Field(unique=True, max_length=64)
    agent_id: str = Field(max_length=64)
    kind: str = Field(max_length=16)
    created_at: int = Field(sa_column=Column(BigInteger, nullable=False))
    updated_at: int = Field(sa_column=Column(BigInteger, nullable=False))
    channel: str | None = Field(default=None, max_length=64)
    chat_type: str | None = Field(default=None, max_length=16)
    label: str | None = Field(default=None, max_length=64)
    display_name: str | None = Field(default=None, sa_column=Column(Text))
    spawned_by: str | None = Field(default=None, max_length=512)
    model: str | None = Field(default=None, max_length=256)
    context_tokens: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    cost_usd: float | None = None
    thinking_level: str | None = Field(default=None, max_length=16)
    verbose_level: str | None = Field(default=None, max_length=16)
    system_sent: bool | None = None
    aborted_last_run: bool | None = None
    send_policy: str | None = Field(default=None, max_length=8)
    last_channel: str | None = Field(default=None, max_length=64)
    last_to: str | None = Field(default=None, max_length=512)
    last_account_id: str | None = Field(default=None, max_length=128)
    last_thread_id: str | None = Field(default=None, max_length=128)
    reset_at: int | None = Field(default=None, sa_column=Column(BigInteger))
    """When the transcript was last replaced (`/new`): what a chat was sent before belongs to
    the old one (the web chat's kept replies, D137)."""


class MessageRow(SQLModel, table=True):
    """One transcript message (format of decision D3); `seq` orders a transcript (D13).

    `seq` is `WAITING` (2**62, see core.store.store) while the message waits for its turn.
    """

    __tablename__ = "messages"
    __table_args__ = (
        Index("ix_messages_session_id", "session_id", "id"),
        Index("ix_messages_session_seq", "session_id", "seq", "id"),
        Index("ix_messages_session_key", "session_key", "id"),  # one session's search (D116)
    )

    id: int | None = Field(default=None, primary_key=True)
    session_key: str = Field(max_length=512)
    session_id: str = Field(max_length=64)
    role: str = Field(max_length=16)
    content: list[dict[str, Any]] = Field(sa_column=Column(JSON, nullable=False))
    timestamp: int = Field(sa_column=Column(BigInteger, nullable=False))
    tool_call_id: str | None = Field(default=None, max_length=128)
    tool_name: str | None = Field(default=None, max_length=128)
    is_error: bool | None = None
    run_id: str | None = Field(default=None, max_length=64)
    meta: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))
    seq: int | None = Field(default=None, sa_column=Column(BigInteger, nullable=True))


class RunRow(SQLModel, table=True):
    """One agent turn; persisted so a waiter that reconnects still learns how it ended."""

    __tablename__ = "runs"
    __table_args__ = (
        Index("ix_runs_session", "session_key", "created_at"),
        Index("ix_runs_status", "status"),
        Index("ix_runs_owner", "owner", "status"),
        Index("ix_runs_session_status", "session_key", "status"),
        Index("ix_runs_created", "created_at"),  # usage over a time range (D182)
    )

    id: str = Field(primary_key=True, max_length=64)
    session_key: str = Field(max_length=512)
    status: str = Field(max_length=32)  # `awaiting_approval` (D72)
    lane: str = Field(default="main", max_length=32)
    deliver: bool = False
    input_message_id: int | None = None
    created_at: int = Field(sa_column=Column(BigInteger, nullable=False))
    started_at: int | None = Field(default=None, sa_column=Column(BigInteger))
    ended_at: int | None = Field(default=None, sa_column=Column(BigInteger))
    error: str | None = Field(default=None, sa_column=Column(Text))
    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    meta: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))
    owner: str | None = Field(default=None, max_length=64)
    """The process that accepted the run and executes it (D27); adopted on takeover."""


class DeliveryRow(SQLModel, table=True):
    """One outbound attempt and its outcome; a suppressed send is a row, never a silence."""

    __tablename__ = "deliveries"
    __table_args__ = (
        Index("ix_deliveries_session", "session_key", "id"),
        Index("ix_deliveries_outcome", "outcome", "id"),
        Index("ix_deliveries_chat", "channel", "to", "kind", "id"),  # D136: kept for a chat
    )

    id: int | None = Field(default=None, primary_key=True)
    session_key: str | None = Field(default=None, max_length=512)
    kind: str = Field(max_length=32)
    outcome: str = Field(max_length=32)
    reason: str | None = Field(default=None, sa_column=Column(Text))
    channel: str | None = Field(default=None, max_length=64)
    to: str | None = Field(default=None, max_length=512)
    account_id: str | None = Field(default=None, max_length=128)
    thread_id: str | None = Field(default=None, max_length=128)
    text: str = Field(sa_column=Column(Text, nullable=False))
    run_id: str | None = Field(default=None, max_length=64)
    attempts: int = 1
    created_at: int = Field(sa_column=Column(BigInteger, nullable=False))


class SubagentRunRow(SQLModel, table=True):
    """One `sessions_spawn` run: who asked, where to announce, and whether it was announced.

    `announce_state` is the exactly-once guard: a process claims the announce by moving it from
    `pending` to `running` in one UPDATE, so two completion paths never both post.
    """

    __tablename__ = "subagent_runs"
    __table_args__ = (
        Index("ix_subagent_runs_requester", "requester_key", "created_at"),
        Index("ix_subagent_runs_child", "child_key"),
        Index("ix_subagent_runs_announce", "announce_state"),
    )

    run_id: str = Field(primary_key=True, max_length=64)
    child_key: str = Field(max_length=512)
    requester_key: str = Field(max_length=512)
    requester_origin: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))
    task: str = Field(sa_column=Column(Text, nullable=False))
    label: str | None = Field(default=None, sa_column=Column(Text))
    cleanup: str = Field(default="keep", max_length=8)
    model: str | None = Field(default=None, max_length=256)
    trace_id: str | None = Field(default=None, max_length=64)
    hops: int = 0
    created_at: int = Field(sa_column=Column(BigInteger, nullable=False))
    started_at: int | None = Field(default=None, sa_column=Column(BigInteger))
    ended_at: int | None = Field(default=None, sa_column=Column(BigInteger))
    outcome: str | None = Field(default=None, max_length=16)
    error: str | None = Field(default=None, sa_column=Column(Text))
    reply: str | None = Field(default=None, sa_column=Column(Text))
    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    archive_at: int | None = Field(default=None, sa_column=Column(BigInteger))
    announce_state: str = Field(default="pending", max_length=16)
    announce_owner: str | None = Field(default=None, max_length=64)
    """The process that claimed the announce (`running`); released only if it died (D29)."""
    announced_at: int | None = Field(default=None, sa_column=Column(BigInteger))
    role: str | None = Field(default=None, max_length=8)
    """The requester's role (D60): the child's runs, announce included, carry it."""
    sender: str | None = Field(default=None, max_length=512)
    """The requester's sender, person, group and automated flag: the announce step runs with
    them like the child's other runs (D149)."""
    person_id: str | None = Field(default=None, max_length=64)
    group_id: str | None = Field(default=None, max_length=512)
    automated: bool | None = None


from core.store.cron_tables import CronJobRow  # noqa: E402,F401  (registers the table)
from core.store.pairing_tables import PairingApprovalRow, PairingRequestRow  # noqa: E402

metadata = SQLModel.metadata

__all__ = [
    "DeliveryRow",
    "MessageRow",
    "PairingApprovalRow",
    "PairingRequestRow",
    "RunRow",
    "SessionRow",
    "SubagentRunRow",
    "metadata",
]

import core.store.approvals_tables  # noqa: E402  (registers the paused runs' questions, D72)
import core.store.cluster_tables  # noqa: E402  (registers the cluster tables, D26)
import core.store.console_tables  # noqa: E402  (registers the console sign-ins, D79)
import core.store.ledger_tables  # noqa: E402  (registers the D16 ledger tables)
import core.store.media_tables  # noqa: E402  (registers the outbound media, D78)
import core.store.people_tables  # noqa: E402  (registers limits and identities, D64, D65)
import core.store.yield_tables  # noqa: E402, F401  (registers the yielded sessions, D69)
