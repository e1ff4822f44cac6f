"""Throw-away PostgreSQL databases on the local server for storage tests."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

PG_ADMIN_DSN = os.environ.get("CROSSTALK_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")


async def _admin() -> object:
    import asyncpg

    return await asyncpg.connect(PG_ADMIN_DSN, timeout=3)


@asynccontextmanager
async def fresh_pg_database() -> AsyncIterator[str]:
    """Yield an asyncpg SQLAlchemy URL of a new empty database, dropped afterwards.

    Without a server the test is skipped locally but fails under CI, where PostgreSQL is part
    of the contract.
    """
    try:
        conn = await _admin()
    except (OSError, Exception) as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"PostgreSQL not reachable: {exc}")
    name = f"ct_{uuid.uuid4().hex[:12]}"
    await conn.execute(f'CREATE DATABASE "{name}"')  # type: ignore[attr-defined]
    base = PG_ADMIN_DSN.rsplit("/", 1)[0].replace("postgresql://", "postgresql+asyncpg://")
    try:
        yield f"{base}/{name}"
    finally:
        await conn.execute(  # type: ignore[attr-defined]
            f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'
        )
        await conn.close()  # type: ignore[attr-defined]
