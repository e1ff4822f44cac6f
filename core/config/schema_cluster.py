"""``cluster``: several gateway processes on one PostgreSQL database (D26, D36)."""

from __future__ import annotations

from pydantic import Field

from core.config.schema_base import ConfigModel

__all__ = ["ClusterConfig"]


class ClusterConfig(ConfigModel):
    lease_seconds: float = Field(default=30.0, gt=0, le=3600)
    """How long a lease (a channel's polling/socket connection, a dead process's work) outlives
    its holder's last renewal; holders renew every third of it. On SQLite (one process) every
    lease is always granted."""
