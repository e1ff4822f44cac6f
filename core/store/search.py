"""Searching transcripts and opening a window around one message (D66).

The sessions a caller may see are a :class:`SessionQuery` (the same conditions `sessions_list`
applies, :func:`core.store.sessions.session_conditions`), joined to the index in one statement,
so scope is applied before `limit`. Best match first (FTS5's bm25 rank, PostgreSQL's
`ts_rank`), then newest.

Speed (D115, D116): only the newest :data:`CANDIDATES` in-scope matches are ranked, so a word
found in a third of a million messages costs a bounded walk from the newest match down, not a
rank of every match; one session's search reads that session's messages first (the
`ix_messages_session_key` index; on SQLite, FTS5 walks only the rowid range the session spans).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import reduce
from typing import Any

from sqlalchemy import (
    BigInteger,
    Connection,
    Text,
    and_,
    cast,
    column,
    func,
    literal,
    literal_column,
    or_,
    select,
    table,
    text,
    tuple_,
)

from core.model.records import SessionQuery, TranscriptMessage
from core.model.search import SearchHit, SearchQuery
from core.store.search_index import TABLE
from core.store.sessions import session_conditions
from core.store.statements import MSG_COLS, M, S
from core.store.transcripts import TranscriptsStore, message_of

_FTS = table(TABLE, column("rowid", BigInteger), column("rank"))
_TSV = table(TABLE, column("message_id", BigInteger), column("tsv"))
_MATCH = text(f"{TABLE} MATCH :b_match")
_SIMPLE: Any = literal_column("'simple'::regconfig")
CANDIDATES = 1000
"""How many of the newest in-scope matches are ranked (D115): more matches than this means a
very common query, whose best hits among the newest thousand are what a recall search wants."""


_Plan = tuple[Any, Any, Any, list[Any], Callable[[Any], Any]]
"""(joined tables, index order column, candidate column, conditions, rank of that column)"""


def _sqlite_query(terms: SearchQuery, key: str | None) -> _Plan:
    joined = _FTS.join(M, M.c.id == _FTS.c.rowid)
    conds: list[Any] = [_MATCH.bindparams(b_match=terms.fts5())]
    if key is not None:  # FTS5 seeks the rowid range; a per-rowid probe would not (D116)
        ids = select(M.c.id).where(M.c.session_key == key)
        lo = ids.with_only_columns(func.min(M.c.id)).scalar_subquery()
        hi = ids.with_only_columns(func.max(M.c.id)).scalar_subquery()
        conds.append(_FTS.c.rowid.between(lo, hi))
    return joined, _FTS.c.rowid, _FTS.c.rank, conds, lambda rank: rank


def _pg_query(terms: SearchQuery, key: str | None) -> _Plan:
    parts: list[Any] = [
        func.phraseto_tsquery(_SIMPLE, cast(literal(" ".join(t)), Text)) for t in terms.terms
    ]
    tsq = reduce(lambda a, b: a.op("&&")(b), parts)
    joined = _TSV.join(M, M.c.id == _TSV.c.message_id)
    # the candidates carry their tsvector and only they are ranked (ts_rank reads it whole)
    match = [_TSV.c.tsv.op("@@")(tsq)]
    return joined, _TSV.c.message_id, _TSV.c.tsv, match, lambda tsv: -func.ts_rank(tsv, tsq)


class SearchStore(TranscriptsStore):
    async def search_messages(
        self,
        terms: SearchQuery,
        scope: SessionQuery,
        *,
        limit: int,
        session_key: str | None = None,
    ) -> list[SearchHit]:
        """User and assistant messages holding every term, in the sessions `scope` selects."""
        if terms.empty:
            return []
        build = _sqlite_query if self.dialect == "sqlite" else _pg_query
        joined, rowid, rank, match, ranked = build(terms, session_key)
        conds = [*match, *session_conditions(scope)]
        if session_key is not None:
            conds.append(M.c.session_key == session_key)
        newest = (  # scope before the bound, the bound before the rank (D115)
            select(M.c.id.label("mid"), M.c.timestamp.label("ts"), rank.label("score"))
            .select_from(joined.join(S, S.c.key == M.c.session_key))
            .where(and_(*conds))
            .order_by(rowid.desc())
            .limit(CANDIDATES)
            .subquery()
        )
        score = ranked(newest.c.score)
        best = (  # ids only: the sort carries no message bodies
            select(newest.c.mid, score.label("score"))
            .order_by(score, newest.c.ts.desc(), newest.c.mid.desc())
            .limit(limit)
            .subquery()
        )
        q = (
            select(M.c.session_key, *MSG_COLS)
            .select_from(best.join(M, M.c.id == best.c.mid))
            .order_by(best.c.score, M.c.timestamp.desc(), M.c.id.desc())
        )
        rows = await self.read(lambda c: c.execute(q).all())
        return [SearchHit(r[0], message_of(r)) for r in rows]

    async def message_window(
        self,
        session_key: str,
        message_id: int,
        limit: int,
        *,
        include_tools: bool = False,
        roles_out: tuple[str, ...] = (),
    ) -> list[TranscriptMessage] | None:
        """Up to `limit` messages of the message's transcript centred on it, oldest first;
        None when the session holds no message with that id."""

        def op(c: Connection) -> list[TranscriptMessage] | None:
            hit = c.execute(
                select(M.c.session_id, M.c.seq, M.c.id).where(
                    and_(M.c.id == message_id, M.c.session_key == session_key)
                )
            ).first()
            if hit is None:
                return None
            sid, seq, mid = hit
            conds = [M.c.session_id == sid]
            if not include_tools:
                conds.append(or_(M.c.role != "toolResult", M.c.id == mid))
            if roles_out:
                conds.append(or_(M.c.role.not_in(roles_out), M.c.id == mid))
            older = c.execute(
                select(*MSG_COLS)
                .where(and_(*conds, tuple_(M.c.seq, M.c.id) <= tuple_(seq, mid)))
                .order_by(M.c.seq.desc(), M.c.id.desc())
                .limit(limit)
            ).all()
            newer = c.execute(
                select(*MSG_COLS)
                .where(and_(*conds, tuple_(M.c.seq, M.c.id) > tuple_(seq, mid)))
                .order_by(M.c.seq, M.c.id)
                .limit(limit)
            ).all()
            before = min(len(older), (limit + 1) // 2)
            after = min(len(newer), limit - before)
            before = min(len(older), limit - after)
            rows = list(reversed(older[:before])) + list(newer[:after])
            return [message_of(r) for r in rows]

        return await self.read(op)
