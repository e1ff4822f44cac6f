"""The fast schema bootstrap and the Alembic migrations must build the same database."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Connection

from core.store import Store
from core.store.engine import head_revision, schema_revision, upgrade
from core.store.search_index import is_index_table
from core.store.tables import metadata
from tests.pg import fresh_pg_database


def _diff(c: Connection) -> list[object]:
    def ours(name: str | None, kind: str, _parents: object) -> bool:
        return not (kind == "table" and name is not None and is_index_table(name))  # D66

    ctx = MigrationContext.configure(c, opts={"include_name": ours})
    return list(compare_metadata(ctx, metadata))


async def test_new_database_is_created_at_head_and_matches_the_models(store: Store) -> None:
    assert await store.read(schema_revision) == head_revision()
    assert await store.read(_diff) == []
    await upgrade(store.url)  # Alembic agrees it is at head: nothing to do, nothing breaks
    assert await store.read(schema_revision) == head_revision()


@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
)
async def test_migrations_build_the_same_schema(backend: str, tmp_path: Path) -> None:
    async def check(url: str) -> None:
        await upgrade(url)
        s = Store(url, tmp_path)
        try:
            assert await s.read(schema_revision) == head_revision()
            assert await s.read(_diff) == []
            await s.open()  # already at head: the store does not touch it
        finally:
            await s.close()

    if backend == "sqlite":
        await check(f"sqlite+aiosqlite:///{tmp_path}/migrated.db")
    else:
        async with fresh_pg_database() as url:
            await check(url)
