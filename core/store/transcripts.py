"""Transcripts (table `messages`) and their JSONL mirror (D13 order, D43 warm tail)."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Unpack

from sqlalchemy import Connection, and_, func, select, update

import core.store.hot as hot
import core.store.statements as st
from core.model.records import SessionEntry, SessionPatch, TranscriptMessage
from core.model.text import clean_json, clean_text
from core.store.database import now_ms
from core.store.files import open_private
from core.store.search_index import index_messages
from core.store.sessions import SessionsStore, check_fields
from core.store.tables import MessageRow, SessionRow

log = logging.getLogger(__name__)

S = SessionRow.__table__  # type: ignore[attr-defined]
M = MessageRow.__table__  # type: ignore[attr-defined]

_MSG_COLS = st.MSG_COLS
# Transcript order (D13): placed messages by their place (`seq`), then those still waiting for
# their turn, in arrival order. Waiting messages carry `seq = WAITING` rather than NULL so that one
# index (session_id, seq, id) serves the order on SQLite and PostgreSQL alike (they sort NULLs
# differently); the value types show them as `seq=None`.
WAITING = st.WAITING
_NEWEST_FIRST = st.NEWEST_FIRST


def message_of(row: Any) -> TranscriptMessage:
    msg = TranscriptMessage(*row[-len(_MSG_COLS) :])
    if msg.seq is not None and msg.seq >= WAITING:
        msg.seq = None
    # rows written before D12 may hold lone surrogates (SQLite JSON keeps them as escapes):
    # they are cleaned on the way out too, so such a session reads (and answers) again
    msg.content = clean_json(msg.content)
    return msg


def place(c: Connection, session_id: str, message_id: int) -> TranscriptMessage | None:
    """Give a waiting message the next place of its transcript; None if it already has one."""
    done = hot.write(c, st.PLACE, {"b_mid": message_id, "b_next_sid": session_id})
    if not done:
        return None
    row = hot.first(c, st.MESSAGE_BY_ID, {"b_mid": message_id})
    return message_of(row) if row else None


def _jsonl(m: TranscriptMessage) -> str:
    return clean_text(json.dumps(m.to_wire(), ensure_ascii=False)) + "\n"


def _line_count(path: Path) -> int:
    if not path.exists():
        return 0
    with path.open("rb") as fh:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 16), b""))


class TranscriptsStore(SessionsStore):
    @staticmethod
    def _insert_messages(
        c: Connection,
        entry: SessionEntry,
        messages: Sequence[TranscriptMessage],
        touch: bool,
        placed: bool = True,
    ) -> list[int]:
        ids = []
        stmt = st.INSERT_PLACED if placed else st.INSERT_WAITING
        for m in messages:
            values = st.message_params(m, entry.key, entry.session_id)
            if not placed:
                del values["b_next_sid"]
            m.id = hot.insert(c, stmt, values)
            ids.append(m.id)
        index_messages(c, messages)  # searchable once this transaction commits (D66)
        if touch:
            st.update_session(c, entry.key, {"updated_at": now_ms()})
        return ids

    # The JSONL transcript is a mirror of committed, placed rows: the database is the record.
    # It is appended after the commit and a failed write never fails (or half-does) the store
    # operation: the file is marked stale and rewritten whole from the rows, atomically, at the
    # session's next write. The first write of a process to a session checks the file's line
    # count against the rows, so a crash between commit and append heals the same way. Lines are
    # cleaned (D12), so no text can make the append itself fail.

    def _mirror(self, entry: SessionEntry, messages: Sequence[TranscriptMessage]) -> None:
        sid = entry.session_id
        if sid not in self._mirror_checked or sid in self._mirror_stale:
            return  # the caller rebuilds (async) instead
        try:
            with open_private(self.transcript_path(sid), "a") as fh:
                fh.write("".join(_jsonl(m) for m in messages))
        except OSError as exc:
            log.warning(
                "transcript mirror of %s is stale (%s); rebuilt at its next write", sid, exc
            )
            self._mirror_stale.add(sid)

    async def _mirror_placed(
        self, entry: SessionEntry, messages: Sequence[TranscriptMessage]
    ) -> None:
        sid = entry.session_id
        if sid in self._mirror_checked and sid not in self._mirror_stale:
            self._mirror(entry, messages)
            return
        await self.rebuild_transcript(entry)

    async def rebuild_transcript(self, entry: SessionEntry) -> None:
        """Rewrite a session's JSONL file from its placed rows unless it already matches."""
        sid = entry.session_id
        path = self.transcript_path(sid)
        rows = await self.read(
            lambda c: [
                message_of(r)
                for r in c.execute(
                    select(*_MSG_COLS)
                    .where(and_(M.c.session_id == sid, M.c.seq < WAITING))
                    .order_by(M.c.seq, M.c.id)
                ).all()
            ]
        )
        try:
            if sid in self._mirror_stale or _line_count(path) != len(rows):
                tmp = path.with_name(f"{path.name}.tmp")
                with open_private(tmp, "w") as fh:
                    fh.write("".join(_jsonl(m) for m in rows))
                os.replace(tmp, path)
        except OSError as exc:
            log.warning("transcript mirror of %s could not be rebuilt: %s", sid, exc)
            self._mirror_stale.add(sid)
            return
        self._mirror_stale.discard(sid)
        self._mirror_checked.add(sid)

    async def append_messages(
        self,
        entry: SessionEntry,
        messages: Sequence[TranscriptMessage],
        *,
        touch: bool = True,
        queued: bool = False,
        **session_fields: Unpack[SessionPatch],
    ) -> list[int]:
        """Store messages in order (and optional session fields, same transaction), mirror them
        to the JSONL transcript, bump `updatedAt`. `queued` messages wait for their turn to be
        placed (D13): stored now, in the transcript from :meth:`start_run`."""
        if not messages and not session_fields:
            return []
        check_fields(session_fields)

        def op(c: Connection) -> list[int]:
            ids = self._insert_messages(
                c, entry, messages, touch and not session_fields, placed=not queued
            )
            if session_fields:
                values = {"updated_at": now_ms(), **session_fields} if touch else session_fields
                c.execute(update(S).where(S.c.key == entry.key).values(**values))
            return ids

        ids = await self.write(op)
        if messages and not queued:
            await self._mirror_placed(entry, messages)
        return ids

    async def place_message(self, entry: SessionEntry, message_id: int) -> None:
        """Place a message that is still waiting (its run ended without starting)."""
        placed = await self.write(lambda c: place(c, entry.session_id, message_id))
        if placed is not None:
            await self._mirror_placed(entry, [placed])

    async def history(
        self,
        session_id: str,
        *,
        limit: int | None = None,
        include_tools: bool = True,
        up_to_id: int | None = None,
        run_id: str | None = None,
        placed_only: bool = False,
        include_summaries: bool = False,
    ) -> list[TranscriptMessage]:
        """The last `limit` messages, oldest first; tool results (and, unless asked for,
        compaction summaries, D71) are filtered before the limit.

        Messages still waiting for their turn come last, in arrival order (D13); `placed_only`
        leaves them out (a turn's model context)."""
        q = st.HISTORY[
            placed_only,
            include_tools,
            up_to_id is not None,
            run_id is not None,
            limit is not None,
            include_summaries,
        ]
        params = {"b_sid": session_id, "b_up_to": up_to_id, "b_run": run_id, "b_limit": limit}
        rows = await self.read(lambda c: c.execute(q, params).all())
        return [message_of(r) for r in reversed(rows)]

    async def context_tail(self, session_id: str, limit: int) -> list[TranscriptMessage]:
        """A turn's model context: the last `limit` placed messages, oldest first, kept warm
        between turns on SQLite (D43). The messages are shared: read them, never mutate them."""
        if self._tails is None:
            return await self.history(
                session_id, limit=limit, placed_only=True, include_summaries=True
            )
        return await self._tails.tail(session_id, limit, self.read, message_of)

    async def recent_messages(
        self, session_ids: Iterable[str], per_session: int
    ) -> dict[str, list[TranscriptMessage]]:
        """Last N non-toolResult messages of many sessions in one windowed query."""
        ids = list(session_ids)
        if not ids or per_session <= 0:
            return {}
        rn = func.row_number().over(partition_by=M.c.session_id, order_by=_NEWEST_FIRST)
        inner = (
            select(M.c.session_id, *_MSG_COLS, rn.label("rn"))
            .where(and_(M.c.session_id.in_(ids), M.c.role.not_in(("toolResult", "summary"))))
            .subquery()
        )
        cols = [inner.c.session_id, *(inner.c[c.name] for c in _MSG_COLS)]
        q = select(*cols).where(inner.c.rn <= per_session).order_by(inner.c.rn.desc())
        out: dict[str, list[TranscriptMessage]] = {}
        for r in await self.read(lambda c: c.execute(q).all()):
            out.setdefault(r[0], []).append(message_of(r))
        return out
