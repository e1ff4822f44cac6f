"""What `GET /api/cluster`, `/healthz` and `/metrics` show of the cluster (D26, D27)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.engine.cluster.node import ClusterNode


async def cluster_view(node: ClusterNode) -> dict[str, Any]:
    """`{processes: [{id, pid, host, startedAt, heartbeatAt, leases: [...]}]}`, live only."""
    leases: dict[str, list[dict[str, Any]]] = {}
    for lease in await node.leases.live():
        leases.setdefault(lease.holder, []).append(
            {"name": lease.name, "acquiredAt": lease.acquired_at, "expiresAt": lease.expires_at}
        )
    return {
        "processes": [
            {
                "id": p.id,
                "pid": p.pid,
                "host": p.host,
                "startedAt": p.started_at,
                "heartbeatAt": p.heartbeat_at,
                "self": p.id == node.id,
                "leases": leases.get(p.id, []),
            }
            for p in await node.register.live()
        ]
    }


async def held_leases(node: ClusterNode) -> list[str]:
    """Names of the leases this process holds now."""
    return [lease.name for lease in await node.leases.live() if lease.holder == node.id]


async def lease_holders(node: ClusterNode) -> dict[str, str]:
    """Lease name → its holder as `host:pid` (the `/metrics` process label), else its id."""
    names = {p.id: f"{p.host}:{p.pid}" for p in await node.register.live()}
    return {lease.name: names.get(lease.holder, lease.holder) for lease in await node.leases.live()}
