"""D50/D51: the model clients' connections close with the runtime; the gateway's heap is frozen
once after the model-stack warm-up, and only in a process that asked for it."""

from __future__ import annotations

import asyncio
import gc
from typing import Any

from core.engine.runs import RunRequest
from core.features.models import heap
from core.runtime import Runtime
from tests.conftest import ConfigFactory


async def test_model_connections_close_with_the_runtime(make_config: ConfigFactory) -> None:
    rt = Runtime(make_config())
    await rt.start(probe_models=False)
    entry = await rt.services.ensure_session("agent:main:main")
    run = await rt.services.start_run(
        RunRequest(session_key=entry.key, message="hi", context=rt.services.context_for(entry))
    )
    assert (await rt.runs.wait(run.id, 30)).reply == "echo: hi"
    clients = list(rt.models._clients)
    assert clients
    loop = asyncio.get_running_loop()
    reported: list[str] = []

    def handler(_loop: Any, context: dict[str, Any]) -> None:
        reported.append(str(context.get("message")))

    loop.set_exception_handler(handler)
    try:
        await rt.stop()
        assert all(c.is_closed() for c in clients)
        del clients
        gc.collect()  # an aiohttp session left open reports itself when collected
        await asyncio.sleep(0)
        assert not [m for m in reported if "Unclosed" in m]
    finally:
        loop.set_exception_handler(None)


def test_heap_settles_only_when_the_process_asked() -> None:
    threshold = gc.get_threshold()
    assert heap.settle() is False
    assert gc.get_freeze_count() == 0
    heap.freeze_after_warm_up()
    try:
        assert heap.settle() is True
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold()[0] == heap.YOUNG_THRESHOLD
        assert heap.settle() is False  # once
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)
