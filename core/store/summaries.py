"""A transcript's summaries (D71): entries of role `summary`, read when a turn compacts.

A summary is an ordinary placed transcript row (so nothing is deleted and `sessions_history`
can show it); its `meta.through` is the place (`seq`) of the last message it summarises. These
reads run only when a compaction is due: a turn's context normally comes from the warm tail.
"""

from __future__ import annotations

from sqlalchemy import and_, select

from core.model.records import TranscriptMessage
from core.store.statements import MSG_COLS, WAITING, M
from core.store.transcripts import TranscriptsStore, message_of


class SummariesStore(TranscriptsStore):
    async def latest_summary(self, session_id: str) -> TranscriptMessage | None:
        q = (
            select(*MSG_COLS)
            .where(and_(M.c.session_id == session_id, M.c.role == "summary", M.c.seq < WAITING))
            .order_by(M.c.seq.desc(), M.c.id.desc())
            .limit(1)
        )
        row = await self.read(lambda c: c.execute(q).first())
        return message_of(row) if row is not None else None

    async def placed_after(
        self, session_id: str, after_seq: int, limit: int
    ) -> list[TranscriptMessage]:
        """The last `limit` placed messages after place `after_seq` (summaries left out),
        oldest first."""
        q = (
            select(*MSG_COLS)
            .where(
                and_(
                    M.c.session_id == session_id,
                    M.c.seq > after_seq,
                    M.c.seq < WAITING,
                    M.c.role != "summary",
                )
            )
            .order_by(M.c.seq.desc(), M.c.id.desc())
            .limit(limit)
        )
        rows = await self.read(lambda c: c.execute(q).all())
        return [message_of(r) for r in reversed(rows)]
