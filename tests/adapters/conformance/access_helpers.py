"""What the access tests (D11) share: the pairing code's text, waiting for refusals, the real
gateway app and the real `crosstalk` CLI against it, a stranger holding a code."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestServer

from core.edge.http.server import build_app
from core.model.records import SessionQuery
from core.runtime import Runtime
from tests.adapters.conformance.drivers import STRANGER, Driver
from tests.cli import crosstalk_at
from tests.fakes.model import FakeModelServer
from tests.polling import eventually

CODE_RE = re.compile(
    r"^🔐 This bot only talks to people its owner approved\. "
    r"Your pairing code: ([ABCDEFGHJKLMNPQRSTUVWXYZ23456789]{8})$"
)
TOKEN = "test-token"  # make_config's gateway token


def require_strangers(driver: Driver) -> None:
    if "strangers" not in driver.supports:
        pytest.skip(f"{driver.platform}: {driver.unsupported['strangers']}")


def code_of(text: str) -> str:
    match = CODE_RE.match(text)
    assert match is not None, text
    return match.group(1)


async def refused(driver: Driver, count: int) -> None:
    """Wait until the channel account has refused `count` messages (each fully handled)."""

    async def reached() -> bool:
        return driver.rt.access.refused(driver.channel, "default") >= count

    await eventually(reached, what=f"{count} refusals on {driver.channel}")
    assert driver.rt.access.refused(driver.channel, "default") == count


async def no_trace(rt: Runtime, fake_model: FakeModelServer) -> None:
    """Nothing was stored in any session and the model was never asked."""
    assert await rt.store.list_sessions(SessionQuery(include_reserved=True)) == []
    assert fake_model.requests == []


@asynccontextmanager
async def gateway_http(driver: Driver) -> AsyncIterator[TestServer]:
    """The real gateway app (HTTP API, /healthz) on the driver's runtime."""
    server = TestServer(build_app(driver.rt, TOKEN, driver.adapters))
    await server.start_server()
    try:
        yield server
    finally:
        await server.close()


async def call(server: TestServer, method: str, path: str) -> tuple[int, Any]:
    async with (
        aiohttp.ClientSession() as http,
        http.request(
            method, server.make_url(path), headers={"Authorization": f"Bearer {TOKEN}"}
        ) as r,
    ):
        return r.status, await r.json()


async def crosstalk(server: TestServer, *args: str) -> tuple[int, str, str]:
    """The real `crosstalk` CLI in a child process, against the test gateway."""
    return await crosstalk_at(str(server.make_url("")), TOKEN, *args)


async def pair_stranger(driver: Driver) -> str:
    """The stranger DMs once and holds a code; returns it."""
    before = len(driver.replies())
    sent = await driver.dm("hi, may I talk to you?", user=STRANGER)
    replies = await driver.wait_replies(before + 1)
    assert replies[before].chat == sent.chat
    return code_of(replies[before].text)
