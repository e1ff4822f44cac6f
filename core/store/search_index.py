"""The transcript search index (D66): SQLite FTS5 or a PostgreSQL `tsvector` with GIN.

One row per user or assistant message with text, keyed by the message's id, written by the
statement that stores the message (:func:`index_messages`, called from every insert of a
message, so a message is searchable the moment its transaction commits) and removed with its
session. Not part of the SQLModel metadata: SQLite's table is virtual. A new database gets it
with its tables (:func:`create_index`, from `create_and_stamp`); an older one from the
migration, which also indexes every stored message (:func:`backfill`).

SQLite indexes the text with `unicode61 remove_diacritics 2`; PostgreSQL the words found here
(lowercase, no diacritics, letters and digits: :func:`core.model.search.words`) under the
`simple` configuration, so both are word-based and case- and diacritics-insensitive without
extensions, and a query's words (found the same way) meet the indexed ones exactly.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import Connection, select, text

import core.store.hot as hot
from core.model.records import TranscriptMessage
from core.model.search import searchable_text, words
from core.store.statements import M

TABLE = "messages_fts"
"""The index's table (FTS5 adds shadow tables named `messages_fts_*` on SQLite)."""

_SQLITE_DDL = (
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {TABLE} USING fts5("
    "body, tokenize = 'unicode61 remove_diacritics 2')"
)
_PG_DDL = (
    f"CREATE TABLE IF NOT EXISTS {TABLE} ("
    "message_id BIGINT PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE, "
    "tsv TSVECTOR NOT NULL)",
    f"CREATE INDEX IF NOT EXISTS ix_{TABLE}_tsv ON {TABLE} USING GIN (tsv)",
)
_SQLITE_INSERT = text(f"INSERT INTO {TABLE} (rowid, body) VALUES (:id, :body)")
_PG_INSERT = text(
    f"INSERT INTO {TABLE} (message_id, tsv) VALUES (:id, to_tsvector('simple', :body))"
)
_SQLITE_FORGET = text(
    f"DELETE FROM {TABLE} WHERE rowid IN (SELECT id FROM messages WHERE session_key = :key)"
)
_BATCH = 2000
NO_INDEX_ENV = "CROSSTALK_BENCH_NO_SEARCH_INDEX"
"""Set to 1 in a gateway's environment, new messages are not indexed: only so that
`bench.bench_http_turns --search-index both` can print the turn rate without the index beside
the rate with it (issue 22). Never for a real gateway: what it stores is not searchable."""
WRITES = os.environ.get(NO_INDEX_ENV) != "1"


def is_index_table(name: str) -> bool:
    """Whether a table belongs to the search index (schema comparisons leave them out)."""
    return name == TABLE or name.startswith(f"{TABLE}_")


def create_index(c: Connection) -> None:
    if c.dialect.name == "sqlite":
        c.exec_driver_sql(_SQLITE_DDL)
    else:
        for ddl in _PG_DDL:
            c.exec_driver_sql(ddl)


def drop_index(c: Connection) -> None:
    c.exec_driver_sql(f"DROP TABLE IF EXISTS {TABLE}")


def _rows(messages: Iterable[TranscriptMessage], sqlite: bool) -> list[dict[str, Any]]:
    out = []
    for m in messages:
        body = searchable_text(m)
        if body is not None and m.id is not None:
            out.append({"id": m.id, "body": body if sqlite else " ".join(words(body))})
    return out


def index_messages(c: Connection, messages: Sequence[TranscriptMessage]) -> None:
    """Index stored messages (their ids set) in the caller's transaction."""
    if not WRITES:
        return
    sqlite = c.dialect.name == "sqlite"
    rows = _rows(messages, sqlite)
    if rows:
        hot.write_many(c, _SQLITE_INSERT if sqlite else _PG_INSERT, rows)


def forget_session(c: Connection, key: str) -> None:
    """Drop a session's messages from the index, before its rows go (PostgreSQL cascades)."""
    if c.dialect.name == "sqlite":
        c.execute(_SQLITE_FORGET, {"key": key})


def backfill(c: Connection) -> int:
    """Index every stored user and assistant message not indexed yet; returns how many."""
    sqlite = c.dialect.name == "sqlite"
    done, after = 0, 0
    key = "rowid" if sqlite else "message_id"
    indexed = text(f"SELECT {key} FROM {TABLE} WHERE {key} > :lo AND {key} <= :hi")
    while True:
        batch = c.execute(
            select(M.c.id, M.c.role, M.c.content)
            .where(M.c.id > after, M.c.role.in_(("user", "assistant")))
            .order_by(M.c.id)
            .limit(_BATCH)
        ).all()
        if not batch:
            return done
        hi = int(batch[-1][0])
        have = {r[0] for r in c.execute(indexed, {"lo": after, "hi": hi})}
        msgs = [
            TranscriptMessage(role=role, content=content or [], timestamp=0, id=int(mid))
            for mid, role, content in batch
            if mid not in have
        ]
        rows = _rows(msgs, sqlite)
        if rows:
            c.execute(_SQLITE_INSERT if sqlite else _PG_INSERT, rows)
        done += len(rows)
        after = hi
