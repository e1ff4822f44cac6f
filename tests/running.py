"""A runtime started with one adapter for the length of a block and stopped however it ends,
for tests that start it on a config of their own (again, for a restart on the same state)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from core.api.testing import RecordingAdapter
from core.config import CrosstalkConfig
from core.runtime import Runtime


@asynccontextmanager
async def running(config: CrosstalkConfig, adapter: RecordingAdapter) -> AsyncIterator[Runtime]:
    rt = Runtime(config)
    await rt.start(adapters=[adapter], probe_models=False)
    try:
        yield rt
    finally:
        await rt.stop()
