"""The cluster's rows (D26–D29): the heartbeat register, leases, the session claim, takeover and
the shared send rate. The cluster's logic (core/engine/cluster) holds no SQL; this is all of it.

Every claim is one statement or one transaction that decides by itself who wins: a conditional
upsert grants a lease, a DELETE … RETURNING gives each dead process to one survivor, a session
row lock orders turns (D27), an advisory lock makes count-then-insert of a send atomic (D29).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy import (
    Connection,
    and_,
    bindparam,
    case,
    delete,
    func,
    insert,
    or_,
    select,
    text,
    update,
)

from core.model.records import RunRecord, SessionEntry, TranscriptMessage
from core.store.cluster_tables import ClusterLeaseRow, ClusterProcessRow, ClusterSendEventRow
from core.store.database import insert_ignore, now_ms, upsert_insert
from core.store.runs import RunsStore
from core.store.sessions import session_by_key
from core.store.tables import MessageRow, RunRow, SessionRow
from core.store.transcripts import message_of, place

P = ClusterProcessRow.__table__  # type: ignore[attr-defined]
L = ClusterLeaseRow.__table__  # type: ignore[attr-defined]
E = ClusterSendEventRow.__table__  # type: ignore[attr-defined]
R = RunRow.__table__  # type: ignore[attr-defined]
S = SessionRow.__table__  # type: ignore[attr-defined]
M = MessageRow.__table__  # type: ignore[attr-defined]
_PROCESS_COLS = (P.c.id, P.c.pid, P.c.host, P.c.started_at, P.c.heartbeat_at, P.c.pid_space)

ClaimResult = Literal["started", "busy", "gone"]
"""`gone`: the run is no longer queued (a survivor aborted it while we were presumed dead)."""
SEND_WINDOW_MS = 60_000


@dataclass(frozen=True, slots=True)
class ProcessInfo:
    id: str
    pid: int
    host: str
    started_at: int
    heartbeat_at: int
    pid_space: str | None = None


@dataclass(frozen=True, slots=True)
class LeaseInfo:
    name: str
    holder: str
    acquired_at: int
    expires_at: int


# The claim's statements, built once (D42): it runs before every turn on PostgreSQL.
_LOCK_SESSION = select(S.c.key).where(S.c.key == bindparam("b_key")).with_for_update()


def _blocker(order: Any) -> Any:
    """A run that must go first: one running anywhere, or an older one queued elsewhere."""
    return (
        select(R.c.id)
        .where(
            and_(
                R.c.session_key == bindparam("b_key"),
                R.c.id != bindparam("b_rid"),
                or_(
                    R.c.status == "running",
                    and_(
                        R.c.status == "queued",
                        R.c.owner != bindparam("b_me"),
                        order < bindparam("b_older"),
                    ),
                ),
            )
        )
        .limit(1)
    )


_BLOCKER_BY_INPUT = _blocker(R.c.input_message_id)
_BLOCKER_BY_TIME = _blocker(R.c.created_at)
_START = (
    update(R)
    .where(
        and_(
            R.c.id == bindparam("b_rid"),
            R.c.status == "queued",
            R.c.owner == bindparam("b_me"),
        )
    )
    .values(status="running", started_at=bindparam("b_started"))
)


def _keep_acquired(ins: Any) -> Any:
    """A renewal keeps the original `acquired_at`; a takeover starts a new one."""
    return case(
        (L.c.holder == ins.excluded.holder, L.c.acquired_at), else_=ins.excluded.acquired_at
    )


class ClusterStore(RunsStore):
    # ---- the heartbeat register -------------------------------------------------------------

    async def heartbeat_process(self, me: ProcessInfo) -> bool:
        """Refresh this process's row (its `heartbeat_at`), inserting it when missing; False
        when it was missing (the first beat, or a survivor declared it dead)."""

        def op(c: Connection) -> bool:
            found = c.execute(
                P.update().where(P.c.id == me.id).values(heartbeat_at=me.heartbeat_at)
            ).rowcount
            if found:
                return True
            insert_ignore(
                c,
                P,
                {
                    "id": me.id,
                    "pid": me.pid,
                    "host": me.host,
                    "started_at": me.started_at,
                    "heartbeat_at": me.heartbeat_at,
                    "pid_space": me.pid_space or None,
                },
                ["id"],
            )
            return False

        return bool(await self.write(op))

    async def remove_process(self, process_id: str) -> None:
        await self.write(lambda c: c.execute(delete(P).where(P.c.id == process_id)))

    async def expire_process(self, process_id: str) -> None:
        """Make the row look dead at once (a clean stop that leaves queued work behind)."""
        await self.write(
            lambda c: c.execute(P.update().where(P.c.id == process_id).values(heartbeat_at=0))
        )

    async def live_processes(self, beat_since: int) -> list[ProcessInfo]:
        rows = await self.read(
            lambda c: c.execute(
                select(*_PROCESS_COLS)
                .where(P.c.heartbeat_at >= beat_since)
                .order_by(P.c.started_at)
            ).all()
        )
        return [ProcessInfo(*r) for r in rows]

    async def registered_processes(self) -> list[ProcessInfo]:
        rows = await self.read(lambda c: c.execute(select(*_PROCESS_COLS)).all())
        return [ProcessInfo(*r) for r in rows]

    async def claim_processes(
        self, me: str, *, silent_before: int | None = None, ids: Sequence[str] = ()
    ) -> list[ProcessInfo]:
        """Remove and return other processes, silent since `silent_before` or named in `ids`:
        the DELETE gives each one to exactly one claimer."""
        if silent_before is not None:
            cond = P.c.heartbeat_at < silent_before
        elif ids:
            cond = P.c.id.in_(list(ids))
        else:
            return []
        stmt = delete(P).where(cond, P.c.id != me).returning(*_PROCESS_COLS)
        rows = await self.write(lambda c: c.execute(stmt).all())
        return [ProcessInfo(*r) for r in rows]

    # ---- leases ---------------------------------------------------------------------------------

    async def acquire_lease(self, name: str, holder: str, now: int, valid_ms: int) -> bool:
        """Take or renew `name` until now + `valid_ms`: granted when absent, ours, or expired."""
        values = {"name": name, "holder": holder, "acquired_at": now, "expires_at": now + valid_ms}

        def op(c: Connection) -> bool:
            ins = upsert_insert(c, L).values(**values)
            stmt = ins.on_conflict_do_update(
                index_elements=["name"],
                set_={
                    "holder": ins.excluded.holder,
                    "expires_at": ins.excluded.expires_at,
                    "acquired_at": _keep_acquired(ins),
                },
                where=or_(L.c.holder == ins.excluded.holder, L.c.expires_at < now),
            ).returning(L.c.holder)
            row = c.execute(stmt).first()
            return row is not None and row[0] == holder

        return bool(await self.write(op))

    async def release_leases(self, holders: Sequence[str], name: str | None = None) -> int:
        """Give up `name` (or every lease) of these holders; returns how many rows went."""
        if not holders:
            return 0
        stmt = delete(L).where(L.c.holder.in_(list(holders)))
        if name is not None:
            stmt = stmt.where(L.c.name == name)
        return int(await self.write(lambda c: c.execute(stmt).rowcount) or 0)

    async def lease_holder(self, name: str, now: int) -> str | None:
        row = await self.read(
            lambda c: c.execute(
                select(L.c.holder).where(and_(L.c.name == name, L.c.expires_at >= now))
            ).first()
        )
        return str(row[0]) if row else None

    async def live_leases(self, now: int) -> list[LeaseInfo]:
        rows = await self.read(
            lambda c: c.execute(
                select(L.c.name, L.c.holder, L.c.acquired_at, L.c.expires_at)
                .where(L.c.expires_at >= now)
                .order_by(L.c.name)
            ).all()
        )
        return [LeaseInfo(*r) for r in rows]

    # ---- the session claim (D27) ---------------------------------------------------------------

    async def claim_turn(self, run: RunRecord, entry: SessionEntry, owner: str) -> ClaimResult:
        """Start `run` only when its session is free everywhere: no running run, no older
        queued run of another process; then mark it running and place its input (D13)."""
        key = entry.key
        by_input = run.input_message_id is not None
        params = {
            "b_key": key,
            "b_rid": run.id,
            "b_me": owner,
            "b_older": run.input_message_id if by_input else run.created_at,
        }

        def op(c: Connection) -> tuple[ClaimResult, TranscriptMessage | None]:
            if c.dialect.name == "postgresql":
                c.execute(_LOCK_SESSION, {"b_key": key})
            blocking = _BLOCKER_BY_INPUT if by_input else _BLOCKER_BY_TIME
            if c.execute(blocking, params).first() is not None:
                return "busy", None
            done = c.execute(_START, {"b_rid": run.id, "b_me": owner, "b_started": run.started_at})
            if not done.rowcount:
                return "gone", None
            if run.input_message_id is None:
                return "started", None
            return "started", place(c, entry.session_id, run.input_message_id)

        result, placed = await self.write(op)
        if placed is not None:
            await self._mirror_placed(entry, [placed])
        return result

    async def runs_elsewhere(self, session_key: str, me: str) -> int:
        """How many queued or running turns of the session other processes hold."""
        count = await self.read(
            lambda c: c.execute(
                select(func.count()).where(
                    and_(
                        R.c.session_key == session_key,
                        R.c.owner != me,
                        R.c.status.in_(("queued", "running")),
                    )
                )
            ).scalar()
        )
        return int(count or 0)

    # ---- takeover (D27) -------------------------------------------------------------------------

    async def take_runs(
        self, me: str, owners: Sequence[str], unowned_before: int | None, reason: str
    ) -> tuple[list[RunRecord], list[RunRecord]]:
        """Abort the running turns of dead `owners` (and of ownerless runs created before
        `unowned_before`) and adopt their queued ones; returns (aborted, adopted)."""

        def op(c: Connection) -> tuple[list[RunRecord], list[RunRecord], list[str]]:
            conds = [R.c.owner.in_(list(owners))] if owners else []
            if unowned_before is not None:
                live = select(P.c.id)
                conds.append(
                    and_(
                        R.c.created_at < unowned_before,
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
                    .values(status="aborted", ended_at=now, error=reason)
                )
                keys = sorted({r.session_key for r in running})
                c.execute(update(S).where(S.c.key.in_(keys)).values(aborted_last_run=True))
                for r in running:
                    r.status, r.ended_at, r.error = "aborted", now, reason
                    entry = session_by_key(c, r.session_key)
                    if (
                        entry is not None
                        and r.input_message_id is not None
                        and place(c, entry.session_id, r.input_message_id) is not None
                    ):
                        touched.append(entry.key)
            if queued:
                c.execute(update(R).where(R.c.id.in_([r.id for r in queued])).values(owner=me))
                for r in queued:
                    r.owner = me
            return running, queued, touched

        aborted, adopted, touched = await self.write(op)
        for key in dict.fromkeys(touched):
            entry = await self.get_session(key)
            if entry is not None:
                await self.rebuild_transcript(entry)
        return aborted, adopted

    async def message_by_id(self, message_id: int) -> TranscriptMessage | None:
        """One stored message (a run's input, to rebuild its request after a takeover)."""
        from core.store.statements import MSG_COLS

        row = await self.read(
            lambda c: c.execute(select(*MSG_COLS).where(M.c.id == message_id)).first()
        )
        return message_of(row) if row is not None else None

    # ---- the shared send rate (D29) ------------------------------------------------------------

    async def count_send(self, source_key: str, per_minute: int) -> str | None:
        """Record one cross-session send from `source_key` in the rolling minute; the error
        text when over `per_minute` (nothing recorded). One transaction under an advisory lock
        on the source (PostgreSQL), so two processes never both take the last slot."""
        now = now_ms()

        def op(c: Connection) -> str | None:
            c.execute(text("SELECT pg_advisory_xact_lock(hashtext(:k))"), {"k": source_key})
            c.execute(
                delete(E).where(and_(E.c.source_key == source_key, E.c.at <= now - SEND_WINDOW_MS))
            )
            count, oldest = c.execute(
                select(func.count(), func.min(E.c.at)).where(E.c.source_key == source_key)
            ).one()
            if count >= per_minute:
                retry = (SEND_WINDOW_MS - (now - int(oldest))) / 1000
                return (
                    f"rate limited: at most {per_minute} cross-session sends per minute "
                    f"from {source_key}; retry in {retry:.0f}s"
                )
            c.execute(insert(E).values(source_key=source_key, at=now))
            return None

        result: str | None = await self.write(op)
        return result


__all__ = ["ClaimResult", "ClusterStore", "LeaseInfo", "ProcessInfo"]
