"""Database engines and schema upgrades (SQLite in WAL mode by default, PostgreSQL by URL)."""

from __future__ import annotations

import asyncio
import re
from functools import cache
from pathlib import Path
from typing import Any

from sqlalchemy import (
    Column,
    Connection,
    Engine,
    MetaData,
    StaticPool,
    String,
    Table,
    create_engine,
    event,
    insert,
    inspect,
    select,
)
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from core.store.files import private_dir

MIGRATIONS_DIR = Path(__file__).parent / "migrations"


def is_sqlite(url: str) -> bool:
    return url.startswith("sqlite")


def sqlite_path(url: str) -> Path | None:
    """The database file of a SQLite URL (None for PostgreSQL and in-memory databases)."""
    if not is_sqlite(url):
        return None
    db_path = url.split("///", 1)[-1]
    return Path(db_path) if db_path and db_path != ":memory:" else None


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    """WAL so readers never block the writer; a busy timeout so writers queue, not fail."""
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA busy_timeout=5000")
    cur.close()


def make_engine(url: str) -> AsyncEngine:
    """Create the async engine; SQLite gets WAL and a busy timeout so writers queue, not fail."""
    if is_sqlite(url):
        db_path = url.split("///", 1)[-1]
        if db_path and db_path != ":memory:":
            private_dir(Path(db_path).parent, tighten=False)  # a directory we did not make
        engine = create_async_engine(url, connect_args={"timeout": 30})
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
        return engine
    return create_async_engine(url, pool_size=10, max_overflow=10, pool_pre_ping=False)


def sync_sqlite_url(url: str) -> str:
    return url.replace("sqlite+aiosqlite://", "sqlite://", 1)


def make_sync_sqlite_engine(url: str) -> Engine:
    """One shared SQLite connection used from the event-loop thread.

    Indexed SQLite statements take tens of microseconds, far less than a hop to a worker
    thread, so the embedded default runs them inline; PostgreSQL goes through asyncpg.
    """
    url = sync_sqlite_url(url)
    db_path = url.split("///", 1)[-1]
    if db_path and db_path != ":memory:":
        private_dir(Path(db_path).parent, tighten=False)
    engine = create_engine(
        url, poolclass=StaticPool, connect_args={"check_same_thread": False, "timeout": 5}
    )
    event.listen(engine, "connect", _sqlite_pragmas)
    return engine


def _alembic_config(url: str) -> Any:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def upgrade_sync(url: str, revision: str = "head") -> None:
    """Run Alembic in the calling thread (its env.py drives its own event loop)."""
    from alembic import command

    command.upgrade(_alembic_config(url), revision)


async def upgrade(url: str, revision: str = "head") -> None:
    """Upgrade from async code: Alembic runs in a worker thread with a loop of its own."""
    await asyncio.to_thread(upgrade_sync, url, revision)


_REV = re.compile(r"^revision\s*=\s*['\"]([^'\"]+)['\"]", re.M)
_DOWN = re.compile(r"^down_revision\s*=\s*['\"]([^'\"]+)['\"]", re.M)


@cache
def head_revision() -> str:
    """The newest migration, read from the version files without importing Alembic."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for path in (MIGRATIONS_DIR / "versions").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        if (rev := _REV.search(text)) is not None:
            revisions.add(rev.group(1))
        if (down := _DOWN.search(text)) is not None:
            parents.add(down.group(1))
    heads = revisions - parents
    if len(heads) != 1:
        raise RuntimeError(f"migrations must have exactly one head, found {sorted(heads)}")
    return heads.pop()


_VERSION_TABLE = Table(
    "alembic_version", MetaData(), Column("version_num", String(32), primary_key=True)
)


def schema_revision(c: Connection) -> str | None:
    """ "" for an empty database, None for tables without a version, else the revision."""
    tables = set(inspect(c).get_table_names())
    if "alembic_version" not in tables:
        return "" if not tables else None
    row = c.execute(select(_VERSION_TABLE.c.version_num)).first()
    return str(row[0]) if row else None


def create_and_stamp(c: Connection, head: str) -> None:
    """A new database: the tables as defined now, recorded as being at `head`."""
    from core.store.search_index import create_index
    from core.store.tables import metadata

    metadata.create_all(c)
    create_index(c)  # not in the metadata: SQLite's is a virtual table (D66)
    _VERSION_TABLE.create(c)
    c.execute(insert(_VERSION_TABLE).values(version_num=head))
