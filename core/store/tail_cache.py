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

import core.store.hot as hot
from core.model.records import TranscriptMessage
from core.store.statements import HISTORY, MSG_COLS, WAITING, M

NEWER = (
    select(*MSG_COLS)
    .where(
        and_(
            M.c.session_id == bindparam("b_sid"), M.c.seq >= bindparam("b_from"), M.c.seq < WAITING
        )
    )
    .order_by(M.c.seq, M.c.id)
)

KEEP = 48
"""Messages kept per session (a turn reads maxContextMessages + 2 = 42 by default, D71)."""
SESSIONS = 1024
"""Sessions kept at most, least recently used dropped first."""
BUDGET = 4 << 20
"""Bytes kept at most (estimated: ~600 per message plus its text), so long messages cannot
make the cache grow past it; a session whose tail alone exceeds it is read each turn."""

Reader = Callable[[Callable[[Connection], Any]], Awaitable[Any]]
Decode = Callable[[Any], TranscriptMessage]


def weight(m: TranscriptMessage) -> int:
    """Estimated bytes of a decoded message: object overhead plus its string values."""
    return 600 + sum(len(v) if isinstance(v, str) else 64 for b in m.content for v in b.values())


class _Tail:
    __slots__ = ("messages", "sizes", "total")

    def __init__(self, messages: list[TranscriptMessage]) -> None:
        self.messages = messages
        self.sizes = [weight(m) for m in messages]
        self.total = sum(self.sizes)

    def extend(self, new: list[TranscriptMessage], keep: int) -> None:
        self.messages.extend(new)
        self.sizes.extend(weight(m) for m in new)
        drop = len(self.messages) - keep
        if drop > 0:
            del self.messages[:drop]
            del self.sizes[:drop]
        self.total = sum(self.sizes)


class TailCache:
    def __init__(self, sessions: int = SESSIONS, keep: int = KEEP, budget: int = BUDGET) -> None:
        self.sessions = sessions
        self.keep = keep
        self.budget = budget
        self.total = 0
        self._tails: OrderedDict[str, _Tail] = OrderedDict()

    def __len__(self) -> int:
        return len(self._tails)

    def forget(self, session_id: str) -> None:
        gone = self._tails.pop(session_id, None)
        if gone is not None:
            self.total -= gone.total

    async def tail(
        self, session_id: str, limit: int, read: Reader, decode: Decode
    ) -> list[TranscriptMessage]:
        """The last `limit` placed messages, oldest first (do not mutate them: they are shared)."""
        if limit > self.keep:
            return await self._load(session_id, limit, read, decode)
        kept = self._tails.pop(session_id, None)
        if kept is None:
            kept = _Tail(await self._load(session_id, self.keep, read, decode))
        else:
            self.total -= kept.total
            last = kept.messages[-1] if kept.messages else None
            params = {"b_sid": session_id, "b_from": last.seq if last else 0}
            rows = await read(lambda c: hot.rows(c, NEWER, params))
            seen = {m.id for m in kept.messages if last is not None and m.seq == last.seq}
            kept.extend([m for m in map(decode, rows) if m.id not in seen], self.keep)
        if kept.total <= self.budget:
            self._tails[session_id] = kept
            self.total += kept.total
            while len(self._tails) > self.sessions or self.total > self.budget:
                self.total -= self._tails.popitem(last=False)[1].total
        return kept.messages[-limit:]

    @staticmethod
    async def _load(
        session_id: str, limit: int, read: Reader, decode: Decode
    ) -> list[TranscriptMessage]:
        q = HISTORY[True, True, False, False, True, True]  # a turn's context sees summaries (D71)
        params = {"b_sid": session_id, "b_limit": limit}
        rows = await read(lambda c: hot.rows(c, q, params))
        return [decode(r) for r in reversed(rows)]
