"""Cron and webhook replies for the web chat (D136): kept when no tab is open, labelled always.

A cron job's or a webhook's turn runs in a session of its own, so its reply is not in the
transcript the page loads. When it is delivered to the web chat, the page shows it with a label
naming its job or hook; when no tab is open it is kept all the same (the delivery log holds its
text, the delivery is `delivered`), and the page shows it among the conversation when a tab
opens, with the images and files it sent (D192). Other deliveries (replies, notices) keep
needing a connected tab.
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
    (D137). A reply that sent images or files carries them as a transcript row does (`media`),
    and its text loses the lines naming them: a reload shows what a live tab did (D192)."""
    rows = []
    for kept in await store.kept_for(channel, peer, KEPT_KINDS, since=since):
        rec = kept.record
        row = {
            "role": "assistant",
            "text": without_lines(rec.text, [m.placeholder for m in kept.media]),
            "ts": rec.created_at,
            "label": kept.origin.label(),
            "deliveryId": rec.id,  # its live frames carry it too (D190)
        }
        if kept.media:
            row["media"] = [m.row() for m in kept.media]
        rows.append(row)
    return rows


def without_lines(text: str, lines: list[str]) -> str:
    """`text` without the last line equal to each of `lines`: a delivery's logged text ends
    with a line naming each item it sends (D78), which the row shows as the item itself."""
    kept = text.split("\n")
    for line in reversed(lines):
        at = next((i for i in range(len(kept) - 1, -1, -1) if kept[i] == line), None)
        if at is not None:
            del kept[at]
    return "\n".join(kept)
