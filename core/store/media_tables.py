"""The `media` table: outbound media kept until they are sent (D78).

A tool's image, a file or a text-to-speech voice note is stored with the run that produced it
before anything is sent, so the delivery that carries it can be resent after a restart (D16).
A delivery chunk names its item by `delivery_chunks.media_id`.
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, Index, LargeBinary, Text
from sqlmodel import Field, SQLModel


class MediaRow(SQLModel, table=True):
    __tablename__ = "media"
    __table_args__ = (
        Index("ix_media_run", "run_id"),
        Index("ix_media_created", "created_at"),
    )

    id: str = Field(primary_key=True, max_length=64)
    run_id: str | None = Field(default=None, max_length=64)
    session_key: str | None = Field(default=None, max_length=512)
    name: str = Field(max_length=255)
    mime: str = Field(max_length=127)
    caption: str | None = Field(default=None, sa_column=Column(Text))
    voice: bool = Field(default=False)
    size: int = Field(sa_column=Column(BigInteger, nullable=False))
    data: bytes = Field(sa_column=Column(LargeBinary, nullable=False))
    created_at: int = Field(sa_column=Column(BigInteger, nullable=False))
