"""Tables of people (D64, D65): usage counters for limits, linked identities, link codes.

`limit_counters` holds one value per subject (`person:<id>`, `sender:<channel>:<userId>`,
`agent:<id>`, `session:<key>`), window (`m:<epoch minute>`, `d:<YYYY-MM-DD>`, `mo:<YYYY-MM>`,
`h:<epoch hour>`) and kind (`messages`, `turns`, `cost`, `refused:<limit>`, `linkfail`), so
every gateway process counts against the same rows.
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, Float, Index
from sqlmodel import Field, SQLModel


class LimitCounterRow(SQLModel, table=True):
    __tablename__ = "limit_counters"

    subject: str = Field(primary_key=True, max_length=512)
    window: str = Field(primary_key=True, max_length=32)
    kind: str = Field(primary_key=True, max_length=64)
    value: float = Field(default=0.0, sa_column=Column(Float, nullable=False))


class IdentityLinkRow(SQLModel, table=True):
    """One platform account that belongs to a person (D65)."""

    __tablename__ = "identity_links"
    __table_args__ = (Index("ix_identity_links_person", "person_id"),)

    channel: str = Field(primary_key=True, max_length=64)
    user_id: str = Field(primary_key=True, max_length=256)
    account_id: str = Field(default="default", max_length=128)
    person_id: str = Field(max_length=64)
    linked_at: int = Field(sa_column=Column(BigInteger, nullable=False))


class LinkCodeRow(SQLModel, table=True):
    """A pending `/link`: the account that asked, valid until `expires_at` (D65)."""

    __tablename__ = "link_codes"

    code: str = Field(primary_key=True, max_length=16)
    channel: str = Field(max_length=64)
    account_id: str = Field(max_length=128)
    user_id: str = Field(max_length=256)
    expires_at: int = Field(sa_column=Column(BigInteger, nullable=False))
