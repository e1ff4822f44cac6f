"""Runs (table `runs`): queued, started, finished in one transaction (D41), aborted after a
crash.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Unpack

from sqlalchemy import Connection, and_, func, or_, select, update

import core.store.hot as hot
import core.store.statements as st
from core.model.records import RunPatch, RunRecord, SessionEntry, TranscriptMessage, TurnWrite
from core.store.database import now_ms
from core.store.sessions import check_fields, session_by_key
from core.store.tables import RunRow, SessionRow
from core.store.transcripts import TranscriptsStore, place

STEER_LANE = "steer"
"""The lane of a `sessions_send` `steer` into a running session (D70, D114): any turn of that
session takes it in before its next model request, whatever its busy-input mode."""
MERGED = "merged"
"""The error of a run whose message joined an earlier turn (D75): it says nothing itself."""

S = SessionRow.__table__  # type: ignore[attr-defined]
R = RunRow.__table__  # type: ignore[attr-defined]


class RunsStore(TranscriptsStore):
    @staticmethod
    def _insert_run(c: Connection, run: RunRecord) -> None:
        hot.write(
            c,
            st.INSERT_RUN,
            {
                "id": run.id,
                "session_key": run.session_key,
                "status": run.status,
                "lane": run.lane,
                "deliver": run.deliver,
                "input_message_id": run.input_message_id,
                "created_at": run.created_at,
                "meta": run.meta,
                "owner": run.owner,
            },
        )

    async def create_run(self, run: RunRecord) -> None:
        await self.write(lambda c: self._insert_run(c, run))

    async def update_run(self, run_id: str, **fields: Unpack[RunPatch]) -> None:
        if fields:
            await self.write(lambda c: st.update_run(c, run_id, fields))

    async def finish_run(
        self,
        run: RunRecord,
        write: TurnWrite | None,
        *,
        fence_owner: str | None = None,
        **fields: Unpack[RunPatch],
    ) -> bool:
        """End a run: its final fields and, for a turn that answered, its reply rows, session
        fields and run meta, in one transaction (D41); the transcript mirror follows it.

        `fence_owner` (a cluster, D27): record it only while that process still owns the run
        and it is in flight; False, with nothing written, when a survivor took it over."""
        if write is not None and write.run_meta is not None:
            fields["meta"] = write.run_meta
        if write is not None:
            check_fields(write.session_fields)

        def op(c: Connection) -> bool:
            if fence_owner is not None:
                if not st.update_run_fenced(c, run.id, fence_owner, fields):
                    return False
            elif fields:
                st.update_run(c, run.id, fields)
            if write is not None:
                self._insert_messages(c, write.entry, write.messages, False)
                st.update_session(
                    c, write.entry.key, {"updated_at": now_ms(), **write.session_fields}
                )
            return True

        if not await self.write(op):
            return False
        if write is not None and write.messages:
            await self._mirror_placed(write.entry, write.messages)
        return True

    async def get_run(self, run_id: str) -> RunRecord | None:
        def op(c: Connection) -> RunRecord | None:
            row = c.execute(st.RUN_BY_ID, {"b_rid": run_id}).mappings().first()
            return RunRecord(**row) if row else None

        return await self.read(op)

    async def run_outcomes(self, run_ids: Sequence[str]) -> dict[str, tuple[str, str | None]]:
        """`{run id: (status, error)}` of these runs, in one read: what a chat page shows for
        each turn after a reload (failed, stopped, still running, D133)."""
        if not run_ids:
            return {}
        q = select(R.c.id, R.c.status, R.c.error).where(R.c.id.in_(list(dict.fromkeys(run_ids))))
        rows = await self.read(lambda c: c.execute(q).all())
        return {str(r[0]): (str(r[1]), r[2]) for r in rows}

    async def last_run(self, session_key: str) -> RunRecord | None:
        q = select(R).where(R.c.session_key == session_key).order_by(R.c.created_at.desc()).limit(1)

        def op(c: Connection) -> RunRecord | None:
            row = c.execute(q).mappings().first()
            return RunRecord(**row) if row else None

        return await self.read(op)

    async def abort_inflight_runs(self, reason: str) -> list[RunRecord]:
        """Mark runs left queued/running by a dead process as aborted; flag their sessions.

        Inputs that were still waiting for their turn take their place now, in arrival order,
        so nothing acknowledged disappears from the transcript."""

        def op(c: Connection) -> tuple[list[RunRecord], list[tuple[str, str]]]:
            q = select(R).where(R.c.status.in_(("queued", "running"))).order_by(R.c.created_at)
            rows = [RunRecord(**r) for r in c.execute(q).mappings().all()]
            touched: list[tuple[str, str]] = []
            if rows:
                keys = sorted({r.session_key for r in rows})
                c.execute(
                    update(R)
                    .where(R.c.id.in_([r.id for r in rows]))
                    .values(status="aborted", ended_at=now_ms(), error=reason)
                )
                c.execute(update(S).where(S.c.key.in_(keys)).values(aborted_last_run=True))
                for r in rows:
                    entry = session_by_key(c, r.session_key)
                    if (
                        entry is not None
                        and r.input_message_id is not None
                        and place(c, entry.session_id, r.input_message_id) is not None
                    ):
                        touched.append((entry.key, entry.session_id))
            return rows, touched

        rows, touched = await self.write(op)
        for key, _sid in dict.fromkeys(touched):
            entry = await self.get_session(key)
            if entry is not None:
                await self.rebuild_transcript(entry)
        return rows

    async def unfinished_sessions_of(self, sender: str) -> list[str]:
        """Sessions holding a `queued` or `running` turn that `sender` (`<channel>:<userId>`)
        started: what a revoked approval stops (D81)."""
        started_by = R.c.meta[("request", "sender")].as_string()
        q = (
            select(R.c.session_key)
            .where(and_(R.c.status.in_(("queued", "running")), started_by == sender))
            .distinct()
        )
        return await self.read(lambda c: [str(k) for (k,) in c.execute(q)])

    async def inflight_owners(self) -> list[str]:
        """The processes whose runs are still `queued` or `running` (on SQLite at a start:
        the previous process's, D81)."""
        q = (
            select(R.c.owner)
            .where(and_(R.c.status.in_(("queued", "running")), R.c.owner.is_not(None)))
            .distinct()
        )
        return await self.read(lambda c: [str(o) for (o,) in c.execute(q)])

    async def clear_aborted_last_run(self, session_key: str) -> None:
        await self.write(
            lambda c: c.execute(
                update(S)
                .where(and_(S.c.key == session_key, S.c.aborted_last_run.is_(True)))
                .values(aborted_last_run=False)
            )
        )

    async def enqueue_message(
        self, entry: SessionEntry, message: TranscriptMessage, run: RunRecord
    ) -> int:
        """Store a user message and the queued run it starts, atomically (one commit); the
        message takes its place in the transcript when the run starts (D13)."""

        def op(c: Connection) -> int:
            (msg_id,) = self._insert_messages(c, entry, [message], True, placed=False)
            run.input_message_id = msg_id
            self._insert_run(c, run)
            return msg_id

        return await self.write(op)

    async def merge_queued(
        self, leader: RunRecord, entry: SessionEntry, *, steer_only: bool = False
    ) -> list[tuple[str, TranscriptMessage]]:
        """Busy input (D75): the session's chat messages queued behind `leader` join its turn,
        and so do `sessions_send` steers (lane `steer`, D114; only those with `steer_only`).

        Their runs end `aborted` with error `merged` (whichever process queued them, D27) and
        their inputs take their places now, after the leader's, in arrival order (D13). Returns
        (run id, placed message) pairs, oldest first."""
        after = leader.input_message_id or 0
        steers = R.c.lane == STEER_LANE
        chat = and_(R.c.deliver.is_(True), R.c.lane == "main")
        lanes = steers if steer_only else or_(chat, steers)
        q = (
            select(R)
            .where(
                and_(
                    R.c.session_key == leader.session_key,
                    R.c.status == "queued",
                    lanes,
                    R.c.input_message_id > after,
                )
            )
            .order_by(R.c.input_message_id)
        )

        def op(c: Connection) -> list[tuple[str, TranscriptMessage]]:
            out: list[tuple[str, TranscriptMessage]] = []
            for row in c.execute(q).mappings().all():
                done = c.execute(
                    update(R)
                    .where(and_(R.c.id == row["id"], R.c.status == "queued"))
                    .values(status="aborted", error=MERGED, ended_at=now_ms())
                )
                if not done.rowcount:
                    continue
                placed = place(c, entry.session_id, row["input_message_id"])
                if placed is not None:
                    out.append((row["id"], placed))
            return out

        merged = await self.write(op)
        if merged:
            await self._mirror_placed(entry, [m for _, m in merged])
        return merged

    async def newest_queued_at(self, session_key: str) -> int | None:
        """When the session's newest queued chat message arrived (its run's creation, D75)."""
        q = select(func.max(R.c.created_at)).where(
            and_(R.c.session_key == session_key, R.c.status == "queued")
        )
        return await self.read(lambda c: c.execute(q).scalar())

    async def start_run(self, run: RunRecord, entry: SessionEntry) -> None:
        """Mark a run running and place its input message in the transcript, in one commit."""

        def op(c: Connection) -> TranscriptMessage | None:
            st.update_run(c, run.id, {"status": "running", "started_at": run.started_at})
            if run.input_message_id is None:
                return None
            return place(c, entry.session_id, run.input_message_id)

        placed = await self.write(op)
        if placed is not None:
            await self._mirror_placed(entry, [placed])
