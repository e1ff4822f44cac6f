"""The `session_yields` table: a session whose turn ended with `sessions_yield` (D69, D112).

One row per session at most: the run that yielded (the session's newest run when the call came
over HTTP or MCP) and the identity of that turn (role, sender, chat), so the turn that the next
sub-agent announce starts runs as the turn that yielded, never as someone else.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, BigInteger, Column
from sqlmodel import Field, SQLModel


class SessionYieldRow(SQLModel, table=True):
    __tablename__ = "session_yields"

    session_key: str = Field(primary_key=True, max_length=512)
    run_id: str | None = Field(default=None, max_length=64)
    yielded_at: int = Field(sa_column=Column(BigInteger, nullable=False))
    context: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
