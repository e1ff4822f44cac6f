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

from sqlalchemy import Connection, and_, or_, select, update

from core.store import RunRecord, Store, TranscriptMessage, now_ms
from core.store.cluster_tables import ClusterProcessRow
from core.store.store import _MSG_COLS, _message, _place, _session
from core.store.tables import MessageRow, RunRow, SessionRow

R = RunRow.__table__  # type: ignore[attr-defined]
S = SessionRow.__table__  # type: ignore[attr-defined]
M = MessageRow.__table__  # type: ignore[attr-defined]
P = ClusterProcessRow.__table__  # type: ignore[attr-defined]

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

    def op(c: Connection) -> tuple[list[RunRecord], list[RunRecord], list[str]]:
        conds = [R.c.owner.in_(list(orphans.owners))] if orphans.owners else []
        if orphans.unowned_before is not None:
            live = select(P.c.id)
            conds.append(
                and_(
                    R.c.created_at < orphans.unowned_before,
                    or_(R.c.owner.is_(None), and_(R.c.owner != me, R.c.owner.not_in(live))),
                )
            )
        if not conds:
            return [], [], []
        q = (
            select(R)
            .where(and_(R.c.status.in_(("queued", "running")), or_(*conds)))
            .order_by(R.c.input_message_id, R.c.created_at)
        )
        if c.dialect.name == "postgresql":
            q = q.with_for_update(skip_locked=True)  # two survivors never take one run
        rows = [RunRecord(**r) for r in c.execute(q).mappings().all()]
        running = [r for r in rows if r.status == "running"]
        queued = [r for r in rows if r.status == "queued"]
        touched: list[str] = []
        if running:
            now = now_ms()
            c.execute(
                update(R)
                .where(R.c.id.in_([r.id for r in running]))
                .values(status="aborted", ended_at=now, error=ABORT_REASON)
            )
            keys = sorted({r.session_key for r in running})
            c.execute(update(S).where(S.c.key.in_(keys)).values(aborted_last_run=True))
            for r in running:
                r.status, r.ended_at, r.error = "aborted", now, ABORT_REASON
                entry = _session(c, r.session_key)
                if (
                    entry is not None
                    and r.input_message_id is not None
                    and _place(c, entry.session_id, r.input_message_id) is not None
                ):
                    touched.append(entry.key)
        if queued:
            c.execute(update(R).where(R.c.id.in_([r.id for r in queued])).values(owner=me))
            for r in queued:
                r.owner = me
        return running, queued, touched

    aborted, adopted, touched = await store.write(op)
    for key in dict.fromkeys(touched):
        entry = await store.get_session(key)
        if entry is not None:
            await store.rebuild_transcript(entry)
    return aborted, adopted


async def input_message(store: Store, message_id: int) -> TranscriptMessage | None:
    """The stored user turn of a run, to rebuild its request."""
    row = await store.read(
        lambda c: c.execute(select(*_MSG_COLS).where(M.c.id == message_id)).first()
    )
    return _message(row) if row is not None else None
