"""The `client` fixture of the HTTP edge tests (test_edge_*.py): the real gateway app with a
4 MiB body limit and a 0.5 s body read timeout, and its runtime. Modules that define their own
`client` fixture keep theirs."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiohttp.test_utils import TestClient, TestServer

from core.edge.http.server import build_app
from core.runtime import Runtime
from tests.conftest import Client, RuntimeFactory


@pytest.fixture
async def client(make_runtime: RuntimeFactory) -> AsyncIterator[tuple[Client, Runtime]]:
    rt = await make_runtime(
        {"gateway": {"maxBodyBytes": 4 * 1024 * 1024, "bodyTimeoutSeconds": 0.5}}
    )
    async with TestClient(TestServer(build_app(rt, "test-token", []))) as c:
        yield c, rt
