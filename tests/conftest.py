"""Shared fixtures: the fake model server, configs pointing at it, a started runtime.

Real model requests are impossible here: the only provider configured is the loopback fake,
and `probe_models=False` keeps the zero-config probe from finding anything on this machine.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient
from hypothesis import HealthCheck, settings

from core.config import CrosstalkConfig, validate_config
from core.runtime import Runtime
from core.store import Store
from tests.browser import need_chromium
from tests.fakes.model import FakeModelServer
from tests.pg import fresh_pg_database

# Fixtures that tests in several folders use, registered as plugins so that no module imports
# a fixture by name: the platform fakes, the platform runtimes (adapters/, e2e/) and the cron
# tests' clocked runtime (core/features/cron/, plugins/cron_tools/).
pytest_plugins = (
    "tests.fakes.fixtures",
    "tests.core.features.cron.helpers",
    "tests.adapters.discord.runtime",
    "tests.adapters.slack.runtime",
    "tests.adapters.telegram.runtime",
)

Client = TestClient[web.Request, web.Application]
"""An aiohttp test client of the gateway's app (typed for mypy --strict)."""

os.environ.setdefault("NO_PROXY", "127.0.0.1,localhost")

# The suite runs on loaded 2-core machines: Hypothesis must judge properties, not wall time.
settings.register_profile("ci", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def deep_merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in extra.items():
        out[k] = (
            deep_merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
        )
    return out


@pytest.fixture
async def fake_model() -> AsyncIterator[FakeModelServer]:
    server = FakeModelServer()
    await server.start()
    yield server
    await server.stop()


ConfigFactory = Callable[..., CrosstalkConfig]


@pytest.fixture
def make_config(tmp_path: Path, fake_model: FakeModelServer) -> ConfigFactory:
    """`make_config({...})`: a config on SQLite in tmp_path with the fake model as default."""

    def factory(extra: dict[str, Any] | None = None) -> CrosstalkConfig:
        raw: dict[str, Any] = {
            "gateway": {"stateDir": str(tmp_path / "state"), "auth": {"token": "test-token"}},
            "models": {"providers": {"fake": {"baseUrl": fake_model.base_url, "apiKey": "test"}}},
            "agents": {"defaults": {"model": "fake/fake-model"}},
        }
        return validate_config(deep_merge(raw, extra or {}))

    return factory


RuntimeFactory = Callable[..., Awaitable[Runtime]]


@pytest.fixture
async def make_runtime(make_config: ConfigFactory) -> AsyncIterator[RuntimeFactory]:
    """`await make_runtime({...}, adapters=[...])`: a started runtime, stopped after the test."""
    started: list[Runtime] = []

    async def factory(
        extra: dict[str, Any] | None = None, *, adapters: list[Any] | None = None
    ) -> Runtime:
        rt = Runtime(make_config(extra))
        await rt.start(adapters=adapters or [], probe_models=False)
        started.append(rt)
        return rt

    yield factory
    for rt in reversed(started):
        await rt.stop()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
async def db(request: pytest.FixtureRequest) -> AsyncIterator[dict[str, Any]]:
    """The config that puts a runtime's store on the backend under test: real SQLite, or a fresh
    real PostgreSQL database (merge it into the config given to `make_runtime`)."""
    if request.param == "sqlite":
        yield {}
    else:
        async with fresh_pg_database() as url:
            yield {"gateway": {"database": {"url": url}}}


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    """An opened, migrated store on real SQLite and on a fresh real PostgreSQL database."""
    if request.param == "sqlite":
        s = Store(f"sqlite+aiosqlite:///{tmp_path}/ct.db", tmp_path)
        await s.open()
        yield s
        await s.close()
    else:
        async with fresh_pg_database() as url:
            s = Store(url, tmp_path)
            await s.open()
            yield s
            await s.close()


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A `browser` test needs Chromium: skipped without it, failed in CI (one check for all)."""
    if item.get_closest_marker("browser") is not None:
        need_chromium()
