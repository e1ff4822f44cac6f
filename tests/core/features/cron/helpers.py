"""A runtime whose cron scheduler is driven by a manual clock (no loop, no sleeping); its
fixtures are registered suite-wide from tests/conftest.py."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from core.api.testing import RecordingAdapter
from core.runtime import Runtime
from tests.conftest import ConfigFactory
from tests.fakes.clock import ManualClock

ClockedRuntime = Callable[..., Awaitable[tuple[Runtime, RecordingAdapter]]]


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
async def clocked_runtime(
    make_config: ConfigFactory, clock: ManualClock
) -> AsyncIterator[ClockedRuntime]:
    """`rt, chat = await clocked_runtime({...})`; call again for a restart on the same state."""
    started: list[Runtime] = []

    async def factory(
        extra: dict[str, Any] | None = None, *, channel: str = "testchat"
    ) -> tuple[Runtime, RecordingAdapter]:
        rt = Runtime(make_config(extra))
        rt.cron.clock = clock
        rt.cron.run_loop = False
        chat = RecordingAdapter(channel=channel)
        started.append(rt)
        await rt.start(adapters=[chat], probe_models=False)
        return rt, chat

    yield factory
    for rt in reversed(started):
        await rt.stop()
