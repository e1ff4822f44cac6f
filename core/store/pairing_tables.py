"""Tables of DM pairing (D11): pending/denied requests and approved senders.

Kept in their own module (imported by core.store.tables) because only core.features.access uses
them.
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, Index, Text, UniqueConstraint
from sqlmodel import Field, SQLModel


class PairingRequestRow(SQLModel, table=True):
    """One unknown sender's request: who, where, when, and the first message's start."""

    __tablename__ = "pairing_requests"
    __table_args__ = (
        Index("ix_pairing_requests_sender", "channel", "account_id", "user_id"),
        Index("ix_pairing_requests_status", "status", "expires_at"),
    )

    code: str = Field(primary_key=True, max_length=16)
    channel: str = Field(max_length=64)
    account_id: str = Field(max_length=128)
    user_id: str = Field(max_length=256)
    user_name: str | None = Field(default=None, sa_column=Column(Text))
    chat_id: str = Field(max_length=512)
    thread_id: str | None = Field(default=None, max_length=128)
    deliver_to: str = Field(max_length=512)
    """The delivery-context ``to`` of the sender's DM: where the approval notice goes."""
    preview: str = Field(sa_column=Column(Text, nullable=False))
    status: str = Field(default="pending", max_length=16)
    """`pending`, `approved` or `denied`."""
    created_at: int = Field(sa_column=Column(BigInteger, nullable=False))
    expires_at: int = Field(sa_column=Column(BigInteger, nullable=False))


class PairingApprovalRow(SQLModel, table=True):
    """A sender the owner approved: part of the channel account's allowlist until revoked."""

    __tablename__ = "pairing_approvals"
    __table_args__ = (
        UniqueConstraint("channel", "account_id", "user_id", name="uq_pairing_approvals_sender"),
    )

    id: int | None = Field(default=None, primary_key=True)
    channel: str = Field(max_length=64)
    account_id: str = Field(max_length=128)
    user_id: str = Field(max_length=256)
    approved_at: int = Field(sa_column=Column(BigInteger, nullable=False))
