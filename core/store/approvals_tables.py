"""The `approvals` table: a paused run's questions (D72 approvals, D73 ask_user).

One row per pending tool call of a run in `awaiting_approval`; deciding is a conditional
update (`status = 'pending'`), so a second press, a second process or a late expiry changes
nothing.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, BigInteger, Column, Index
from sqlmodel import Field, SQLModel


class ApprovalRow(SQLModel, table=True):
    __tablename__ = "approvals"
    __table_args__ = (
        Index("ix_approvals_run", "run_id"),
        Index("ix_approvals_status_expires", "status", "expires_at"),
        Index("ix_approvals_session_status", "session_key", "status"),
    )

    id: str = Field(primary_key=True, max_length=16)
    kind: str = Field(max_length=16)
    run_id: str = Field(max_length=64)
    tool_call_id: str = Field(max_length=128)
    tool: str = Field(max_length=128)
    arguments: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    session_key: str = Field(max_length=512)
    requester: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    created_at: int = Field(sa_column=Column(BigInteger, nullable=False))
    expires_at: int = Field(sa_column=Column(BigInteger, nullable=False))
    status: str = Field(max_length=16)
    decided_at: int | None = Field(default=None, sa_column=Column(BigInteger, nullable=True))
    decided_by: str | None = Field(default=None, max_length=256)
    answer: str | None = Field(default=None, max_length=4000)
    requests: list[dict[str, Any]] | None = Field(default=None, sa_column=Column(JSON))
