"""Per channel account figures for `/healthz` and `crosstalk channels status` (decision D16)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.engine.cluster.status import lease_holders

if TYPE_CHECKING:
    from core.runtime import Runtime


async def channel_entries(rt: Runtime) -> list[dict[str, Any]]:
    """Each adapter's status plus redeliveries dropped, failed deliveries, last receive (ms)."""
    failed = await rt.store.failed_counts()
    holders = await lease_holders(rt.cluster)  # D27: which process holds each connection
    out: list[dict[str, Any]] = []
    for adapter in rt.channels:
        wire = adapter.status().to_wire()
        wire["refused"] = rt.access.refused(adapter.channel, adapter.account_id)  # D11
        wire["duplicatesDropped"] = rt.router.duplicates.count(adapter.channel, adapter.account_id)
        wire["deliveriesFailed"] = failed.get((adapter.channel, adapter.account_id), 0)
        wire["lastReceiveAt"] = adapter.last_receive_ms
        holder = holders.get(f"channel:{adapter.channel}:{adapter.account_id}")
        if holder is not None:  # one name for a process on every line: `host:pid`
            wire["holder"] = holder
            if str(wire.get("detail") or "").startswith("held by "):
                wire["detail"] = f"held by {holder}"
        out.append(wire)
    return out


def status_suffix(entry: dict[str, Any]) -> str:
    """What `crosstalk channels status` appends to a channel account's line."""
    suffix = f" holder={entry['holder']}" if entry.get("holder") else ""  # D36
    suffix += (
        f" duplicatesDropped={int(entry.get('duplicatesDropped') or 0)}"
        f" deliveriesFailed={int(entry.get('deliveriesFailed') or 0)}"
    )
    if entry.get("lastReceiveAt"):
        import datetime as dt

        at = dt.datetime.fromtimestamp(int(entry["lastReceiveAt"]) / 1000, dt.UTC)
        suffix += f" lastReceive={at.strftime('%Y-%m-%dT%H:%M:%SZ')}"
    return suffix
