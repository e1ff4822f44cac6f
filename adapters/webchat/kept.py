"""Cron and webhook replies for the web chat (D136): kept when no tab is open, labelled always.

A cron job's or a webhook's turn runs in a session of its own, so its reply is not in the
transcript the page loads. When it is delivered to the web chat, the page shows it with a label
naming its job or hook; when no tab is open it is kept all the same (the delivery log holds its
text, the delivery is `delivered`), and the page shows it among the conversation when a tab
opens. Other deliveries (replies, notices) keep needing a connected tab.
"""

from __future__ import annotations

from typing import Any

from core.api.channels import ChunkRef
from core.api.gateway import SessionStore

KEPT_KINDS = ("cron", "hook")


async def chunk_fields(store: SessionStore, ref: ChunkRef | None) -> dict[str, Any]:
    """What a chunk's frame says of its delivery: a cron or webhook reply's `label` and
    `deliveryId` (D136), a failed turn's notice its turn (`endOf`), so a page whose history
    already shows that reply or that turn's outcome never gets the frame (D190); {} otherwise."""
    if ref is None:
        return {}
    origin = await store.delivery_origin(ref.delivery_id)
    if origin is None:
        return {}
    label = origin.label() if origin.kind in KEPT_KINDS else None
    if label is not None:
        return {"label": label, "deliveryId": ref.delivery_id}
    if origin.kind == "notice" and origin.run_id:
        return {"endOf": origin.run_id}
    return {}


async def kept_rows(
    store: SessionStore, channel: str, peer: str, since: int = 0
) -> list[dict[str, Any]]:
    """History rows (as `history_rows` makes them) of the cron and webhook replies this chat
    was sent at `since` (ms) or later, labelled: a session's reset leaves earlier ones behind
    (D137)."""
    rows = []
    for rec, origin in await store.kept_for(channel, peer, KEPT_KINDS, since=since):
        rows.append(
            {
                "role": "assistant",
                "text": rec.text,
                "ts": rec.created_at,
                "label": origin.label(),
                "deliveryId": rec.id,  # its live frames carry it too (D190)
            }
        )
    return rows
