"""``cluster`` section (decisions D26, D27): several gateway processes on one PostgreSQL.

Only the lease time is tunable: a process whose heartbeat is older than it is dead, and a
survivor takes over its turns and leases. Heartbeats run every quarter of it.
"""

from __future__ import annotations

from pydantic import Field

from core.config.schema_base import ConfigModel

__all__ = ["ClusterConfig"]


class ClusterConfig(ConfigModel):
    lease_seconds: float = Field(default=30.0, ge=1.0, le=3600.0)
    """How long a silent process (or an unrenewed lease: a channel's polling/socket connection, a
    dead process's work) is still trusted to be alive. On SQLite (one process) every lease is
    always granted."""
