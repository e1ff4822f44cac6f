"""Tables of the cluster (several gateway processes on one PostgreSQL database, D26).

`cluster_processes` is the heartbeat register: a process whose `heartbeat_at` is older than the
lease time is dead. `cluster_leases` names one holder per resource (a channel connection, a
singleton job) until `expires_at`; the holder renews it, anyone takes it once it has expired.
Both work on SQLite too, where there is only ever one process.
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, Index
from sqlmodel import Field, SQLModel


class ClusterProcessRow(SQLModel, table=True):
    __tablename__ = "cluster_processes"
    __table_args__ = (Index("ix_cluster_processes_heartbeat", "heartbeat_at"),)

    id: str = Field(primary_key=True, max_length=64)
    pid: int
    host: str = Field(max_length=255)
    started_at: int = Field(sa_column=Column(BigInteger, nullable=False))
    heartbeat_at: int = Field(sa_column=Column(BigInteger, nullable=False))
    pid_space: str | None = Field(default=None, max_length=128)
    """Kernel boot and PID namespace: where `pid` can be checked directly (D27)."""


class ClusterLeaseRow(SQLModel, table=True):
    __tablename__ = "cluster_leases"
    __table_args__ = (Index("ix_cluster_leases_holder", "holder"),)

    name: str = Field(primary_key=True, max_length=255)
    holder: str = Field(max_length=64)
    acquired_at: int = Field(sa_column=Column(BigInteger, nullable=False))
    expires_at: int = Field(sa_column=Column(BigInteger, nullable=False))


class ClusterSendEventRow(SQLModel, table=True):
    """One cross-session send (D8), so the per-minute rate counts across processes (D29)."""

    __tablename__ = "cluster_send_events"
    __table_args__ = (Index("ix_cluster_send_events_source", "source_key", "at"),)

    id: int | None = Field(default=None, primary_key=True)
    source_key: str = Field(max_length=512)
    at: int = Field(sa_column=Column(BigInteger, nullable=False))
