"""The web chat race tests' gateway (D190, D191): a runtime with the cron job of `steps.EXTRA` on
the backend under test, the web chat adapter holding a `Steps` hook, served on a test server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestServer

from adapters.webchat.adapter import WebchatAdapter
from core.edge.http.server import build_app
from core.runtime import Runtime
from tests.adapters.webchat.steps import EXTRA, Gateway, Steps
from tests.conftest import ConfigFactory
from tests.fakes.model import FakeModelServer


@pytest.fixture
async def gateway(
    make_config: ConfigFactory, fake_model: FakeModelServer, db: dict[str, Any]
) -> AsyncIterator[Gateway]:
    rt = Runtime(make_config(EXTRA | db))
    rt.cron.run_loop = False
    adapter = WebchatAdapter.for_gateway(rt.pages)
    adapter.step_hook = steps = Steps()
    await rt.start(adapters=[adapter], probe_models=False)
    server = TestServer(build_app(rt, "test-token", [adapter]))
    await server.start_server()
    try:
        async with aiohttp.ClientSession() as http:
            yield Gateway(http, server, steps, rt)
    finally:
        for held in steps.holds.values():
            held.released.set()
        await server.close()
        await rt.stop()
