"""The session tools' runtimes: each test that takes `start` runs on real SQLite and on a fresh
real PostgreSQL database."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from core.runtime import Runtime
from tests.conftest import RuntimeFactory
from tests.pg import fresh_pg_database


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
async def start(
    request: pytest.FixtureRequest, make_runtime: RuntimeFactory
) -> AsyncIterator[RuntimeFactory]:
    if request.param == "sqlite":
        yield make_runtime
        return
    async with fresh_pg_database() as url:

        async def on_pg(extra: dict[str, Any] | None = None) -> Runtime:
            return await make_runtime({"gateway": {"database": {"url": url}}, **(extra or {})})

        yield on_pg
