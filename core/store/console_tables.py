"""The `console_sessions` table: the owner console's sign-ins (D79).

Only a SHA-256 digest of each session cookie is stored, so a copy of the database does not
sign anyone in. A row ends on sign-out (deleted) or when `expires_at` passes.
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, Index
from sqlmodel import Field, SQLModel


class ConsoleSessionRow(SQLModel, table=True):
    __tablename__ = "console_sessions"
    __table_args__ = (Index("ix_console_sessions_expires", "expires_at"),)

    digest: str = Field(primary_key=True, max_length=64)
    created_at: int = Field(sa_column=Column(BigInteger, nullable=False))
    expires_at: int = Field(sa_column=Column(BigInteger, nullable=False))
