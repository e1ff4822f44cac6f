"""The `cron_jobs` table: job definitions (from config, HTTP, CLI and agents) and their state.

`running_since` is the non-overlap guard and the claim: a firing claims its job by setting it
in the same UPDATE that checks `next_run_at <= now`, and clears it when the firing ends.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, BigInteger, Column, Index, Text
from sqlmodel import Field, SQLModel


class CronJobRow(SQLModel, table=True):
    __tablename__ = "cron_jobs"
    __table_args__ = (
        Index("ix_cron_jobs_due", "enabled", "next_run_at"),
        Index("ix_cron_jobs_owner", "owner_session"),
        Index("ix_cron_jobs_creator", "creator"),
    )

    id: str = Field(primary_key=True, max_length=64)
    agent_id: str = Field(max_length=64)
    spec: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    enabled: bool = True
    source: str = Field(max_length=16)
    owner_session: str | None = Field(default=None, max_length=512)
    creator: str | None = Field(default=None, max_length=512)
    """`<channel>:<user id>` of the person whose message made an agent's job (D81)."""
    creator_role: str | None = Field(default=None, max_length=8)
    """That person's role, person and group then: the job's turns run as them (D176)."""
    creator_person: str | None = Field(default=None, max_length=64)
    creator_group: str | None = Field(default=None, max_length=512)
    created_at: int = Field(sa_column=Column(BigInteger, nullable=False))
    updated_at: int = Field(sa_column=Column(BigInteger, nullable=False))
    next_run_at: int | None = Field(default=None, sa_column=Column(BigInteger))
    running_since: int | None = Field(default=None, sa_column=Column(BigInteger))
    claimed_by: str | None = Field(default=None, max_length=64)
    """The process firing the job; its claim is released only if it died (D29)."""
    last_run_at: int | None = Field(default=None, sa_column=Column(BigInteger))
    last_status: str | None = Field(default=None, max_length=16)
    last_error: str | None = Field(default=None, sa_column=Column(Text))
    runs: list[dict[str, Any]] | None = Field(default=None, sa_column=Column(JSON))
