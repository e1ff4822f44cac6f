"""Tables of the exactly-once ledger (decision D16): inbound identities and delivery chunks.

`inbound_identities` remembers every platform identity of an accepted inbound message (and
every HTTP `Idempotency-Key`) under its primary key, written in the same transaction as the
message, so a redelivery is recognised on any process and after any restart.
`delivery_chunks` is the per-chunk state of each outbound delivery: a chunk with a
`platform_message_id` has reached the chat and is never sent again; a chunk with a `media_id`
sends that stored item (D78).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, BigInteger, Column, Index, Text
from sqlmodel import Field, SQLModel


class InboundIdentityRow(SQLModel, table=True):
    """One platform identity (`update:<id>`, `msg:<chat>:<id>`, `event:<id>`, `idem:<key>`)."""

    __tablename__ = "inbound_identities"
    __table_args__ = (Index("ix_inbound_identities_created", "created_at"),)

    channel: str = Field(primary_key=True, max_length=64)
    account_id: str = Field(primary_key=True, max_length=128)
    identity: str = Field(primary_key=True, max_length=512)
    created_at: int = Field(sa_column=Column(BigInteger, nullable=False))
    session_key: str | None = Field(default=None, max_length=512)
    run_id: str | None = Field(default=None, max_length=64)
    result: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))


class DeliveryChunkRow(SQLModel, table=True):
    """One chunk of one delivery: `pending` → `sent` | `failed` | `resent_after_crash`."""

    __tablename__ = "delivery_chunks"
    __table_args__ = (
        Index("ix_delivery_chunks_state", "state", "delivery_id"),
        Index("ix_delivery_chunks_message", "platform_message_id"),
    )

    delivery_id: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    chunk_index: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    text: str = Field(sa_column=Column(Text, nullable=False))
    state: str = Field(max_length=24)
    platform_message_id: str | None = Field(default=None, max_length=128)
    media_id: str | None = Field(default=None, max_length=64)
    """A media chunk (D78): the stored item it sends; its `text` is the item's placeholder."""
    reason: str | None = Field(default=None, sa_column=Column(Text))
    updated_at: int = Field(sa_column=Column(BigInteger, nullable=False))
