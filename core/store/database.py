"""The database under the store: one engine, a read and a write, the state directory.

Every operation is written once, as a function of a synchronous SQLAlchemy connection, and run
by :meth:`Database.read` / :meth:`Database.write`: inline on one shared connection for SQLite
(the embedded default; an indexed statement costs less than a thread hop), through asyncpg's
`run_sync` for PostgreSQL. Each aggregate of the store (sessions, transcripts, runs, the
delivery log, inbound identities, pairing, cron, sub-agents, the cluster) is a module of its own
whose class adds its operations to this one; :class:`core.store.store.Store` joins them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncEngine

from core.model.errors import CrosstalkError
from core.store.engine import (
    create_and_stamp,
    head_revision,
    is_sqlite,
    make_engine,
    make_sync_sqlite_engine,
    schema_revision,
    sqlite_path,
    upgrade,
)
from core.store.files import private_dir, private_file, tighten_tree
from core.store.tail_cache import TailCache

T = TypeVar("T")
log = logging.getLogger(__name__)


def now_ms() -> int:
    return int(time.time() * 1000)


class StoreError(CrosstalkError):
    """A store operation was refused (unknown session, label in use, ...)."""


def upsert_insert(c: Connection, table: Any) -> Any:
    """The dialect's INSERT, which has ON CONFLICT. PostgreSQL's is imported only on
    PostgreSQL: on SQLite its dialect would be ~2 MiB of an idle gateway for nothing."""
    if c.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        return pg_insert(table)
    return sqlite_insert(table)


def insert_ignore(c: Connection, table: Any, values: dict[str, Any], keys: list[str]) -> None:
    """INSERT … ON CONFLICT DO NOTHING: concurrent creators of one row both succeed."""
    ins = upsert_insert(c, table)
    c.execute(ins.values(**values).on_conflict_do_nothing(index_elements=keys))


class Database:
    """Async access to SQLite or PostgreSQL; transcripts are mirrored to JSONL files."""

    def __init__(self, url: str, state_dir: Path) -> None:
        self.url = url
        self.state_dir = state_dir
        self.transcripts_dir = state_dir / "transcripts"
        self._sync: Engine | None = make_sync_sqlite_engine(url) if is_sqlite(url) else None
        self._async: AsyncEngine | None = None if self._sync else make_engine(url)
        # reads run outside a transaction (D44): READ COMMITTED gives each statement its own
        # snapshot either way, and a read is then one round trip instead of BEGIN/…/ROLLBACK
        self._reads: AsyncEngine | None = (
            self._async.execution_options(isolation_level="AUTOCOMMIT") if self._async else None
        )
        self._mirror_checked: set[str] = set()  # session ids whose JSONL matched the rows
        self._mirror_stale: set[str] = set()  # session ids whose last JSONL append failed
        self._tails = TailCache() if self._sync is not None else None  # D43: SQLite only
        self._conn: Connection | None = None  # SQLite's one connection, kept open (D196)

    async def open(self, *, migrate: bool = True) -> None:
        """Bring the schema to the newest migration.

        A new database is created from the table definitions and stamped, and one already at
        the head is left alone; only an older schema runs Alembic (whose import alone costs
        ~10 MiB and ~0.1 s that the gateway would otherwise keep for its lifetime).
        """
        private_dir(self.state_dir)
        private_dir(self.transcripts_dir)
        tighten_tree(self.state_dir)
        db_file = sqlite_path(self.url)
        if db_file is not None:
            private_file(db_file)  # before SQLite creates it: its WAL and SHM inherit 0600
        if not migrate:
            return
        head = head_revision()
        current = await self.read(schema_revision)
        if current == "":
            await self.write(lambda c: create_and_stamp(c, head))
        elif current != head:
            await upgrade(self.url)

    async def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._sync is not None:
            self._sync.dispose()
        if self._async is not None:
            await self._async.dispose()

    @property
    def dialect(self) -> str:
        return "sqlite" if self._sync is not None else "postgresql"

    def _sqlite(self) -> Connection:
        """SQLite's one connection, kept open between operations (D196): checking it out of
        the pool and back in cost more than most of the statements run on it."""
        conn = self._conn
        if conn is None or conn.closed or conn.invalidated:
            assert self._sync is not None
            if conn is not None:
                conn.close()
            conn = self._conn = self._sync.connect()
        return conn

    async def read(self, op: Callable[[Connection], T]) -> T:
        """Run a read-only query function; extensions (e.g. the sub-agent registry) use this
        too. On PostgreSQL it runs outside a transaction (D44): never write from it."""
        if self._sync is not None:
            conn = self._sqlite()
            try:
                return op(conn)
            finally:
                conn.rollback()  # no snapshot kept: the next read sees other writers (D43)
        assert self._reads is not None
        async with self._reads.connect() as aconn:
            return await aconn.run_sync(op)

    async def write(self, op: Callable[[Connection], T]) -> T:
        """Run a function inside one transaction (committed when it returns)."""
        if self._sync is not None:
            conn = self._sqlite()
            with conn.begin():
                return op(conn)
        assert self._async is not None
        async with self._async.begin() as aconn:
            return await aconn.run_sync(op)

    def transcript_path(self, session_id: str) -> Path:
        return self.transcripts_dir / f"{session_id}.jsonl"
