"""The last placed messages of recently active sessions, kept warm between turns (D43).

Each turn reads its session's last ~40 placed messages as model context. Placed messages never
change (their place `seq` is final, D13) and only ever grow at the end, so a session's tail is
kept here and a turn asks the database only for what was placed after it: one indexed query
that returns the couple of rows since the previous turn, instead of decoding 40 rows each time.
Used on SQLite only, where writers serialize and a place is never below one already committed;
on PostgreSQL, concurrent writers in other processes could commit a lower place late.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy import Connection, and_, bindparam, select

from core.store.entries import TranscriptMessage
from core.store.statements import HISTORY, MSG_COLS, WAITING, M

NEWER = select(*MSG_COLS).where(and_(
    M.c.session_id == bindparam("b_sid"), M.c.seq >= bindparam("b_from"),
    M.c.seq < WAITING)).order_by(M.c.seq, M.c.id)

KEEP = 64
"""Messages kept per session (a turn uses HISTORY_LIMIT + 1 = 41)."""
SESSIONS = 1024
"""Sessions kept, least recently used dropped first (about 64 × 1 KiB each at most)."""

Reader = Callable[[Callable[[Connection], Any]], Awaitable[Any]]
Decode = Callable[[Any], TranscriptMessage]


class TailCache:
    def __init__(self, sessions: int = SESSIONS, keep: int = KEEP) -> None:
        self.sessions = sessions
        self.keep = keep
        self._tails: OrderedDict[str, list[TranscriptMessage]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._tails)

    def forget(self, session_id: str) -> None:
        self._tails.pop(session_id, None)

    async def tail(self, session_id: str, limit: int, read: Reader, decode: Decode
                   ) -> list[TranscriptMessage]:
        """The last `limit` placed messages, oldest first (do not mutate them: they are shared)."""
        if limit > self.keep:
            return await self._load(session_id, limit, read, decode)
        kept = self._tails.pop(session_id, None)
        if kept is None:
            kept = await self._load(session_id, self.keep, read, decode)
        else:
            last = kept[-1] if kept else None
            params = {"b_sid": session_id, "b_from": last.seq if last else 0}
            rows = await read(lambda c: c.execute(NEWER, params).all())
            seen = {m.id for m in kept if last is not None and m.seq == last.seq}
            kept.extend(m for m in map(decode, rows) if m.id not in seen)
            del kept[:-self.keep]
        self._tails[session_id] = kept
        if len(self._tails) > self.sessions:
            self._tails.popitem(last=False)
        return kept[-limit:]

    @staticmethod
    async def _load(session_id: str, limit: int, read: Reader, decode: Decode
                    ) -> list[TranscriptMessage]:
        q = HISTORY[True, True, False, False, True]
        params = {"b_sid": session_id, "b_limit": limit}
        rows = await read(lambda c: c.execute(q, params).all())
        return [decode(r) for r in reversed(rows)]
