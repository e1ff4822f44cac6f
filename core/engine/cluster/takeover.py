"""What a survivor does with a dead process's turns (D27).

Its `running` turns died with it: they are marked `aborted` (the session is flagged, D12, and
the input takes its place in the transcript, D13) and their chats get the restart notice. Its
`queued` turns were accepted and acknowledged, so none may be lost: the survivor adopts them
(owner := itself) in the same transaction and runs them in their arrival order. Runs with no
live owner at all (written before D27, or by a process that died before its first heartbeat)
are treated the same way once they are older than the lease time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.store import RunRecord, Store, TranscriptMessage

ABORT_REASON = "gateway restarted while the run was active"


@dataclass(slots=True)
class Orphans:
    """Whose in-flight runs to take: the dead processes, and ownerless runs created before."""

    owners: Sequence[str]
    unowned_before: int | None = None


async def take_runs(
    store: Store, me: str, orphans: Orphans
) -> tuple[list[RunRecord], list[RunRecord]]:
    """Abort the running turns and adopt the queued ones; returns (aborted, adopted)."""
    return await store.take_runs(me, orphans.owners, orphans.unowned_before, ABORT_REASON)


async def input_message(store: Store, message_id: int) -> TranscriptMessage | None:
    """The stored user turn of a run, to rebuild its request."""
    return await store.message_by_id(message_id)
