"""Database engines and schema upgrades (SQLite in WAL mode by default, PostgreSQL by URL)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, StaticPool, create_engine, event
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

MIGRATIONS_DIR = Path(__file__).parent / "migrations"


def is_sqlite(url: str) -> bool:
    return url.startswith("sqlite")


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
            Path(db_path).parent.mkdir(parents=True, exist_ok=True)
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
        Path(db_path).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, poolclass=StaticPool,
                           connect_args={"check_same_thread": False, "timeout": 5})
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
