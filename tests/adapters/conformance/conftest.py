"""The parametrised ``driver`` fixture: every conformance test runs once per platform."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.adapters.conformance.drivers import PLATFORMS, Driver, make_driver
from tests.conftest import RuntimeFactory
from tests.fakes.base import EmulatorServer


@pytest.fixture(params=PLATFORMS)
def platform(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def platform_fake(request: pytest.FixtureRequest, platform: str) -> EmulatorServer | None:
    """Only the fake this platform needs (``fake_telegram`` / ``fake_discord`` / ...).

    Requested lazily, so it is torn down after everything that depends on this fixture.
    """
    if platform == "webchat":
        return None
    fake = request.getfixturevalue(f"fake_{platform}")
    assert isinstance(fake, EmulatorServer)
    return fake


@pytest.fixture
async def driver(
    platform: str,
    platform_fake: EmulatorServer | None,
    make_runtime: RuntimeFactory,
    tmp_path: Path,
) -> AsyncIterator[Driver]:
    """A not-yet-started driver; the test calls ``await driver.start(make_runtime, ...)``.

    It depends on ``make_runtime`` only so that it is torn down first: the adapter (and the web
    chat client) stop before the runtime and before the platform fake.
    """
    drv = make_driver(platform, platform_fake, tmp_path)
    yield drv
    await drv.close()
