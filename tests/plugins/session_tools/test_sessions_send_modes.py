"""`sessions_send` `mode` (D70) on SQLite and PostgreSQL: `notify` adds context and starts no
turn; `steer` is accepted into a running turn, and behaves as `run` when the target is idle."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from core.runtime import Runtime
from tests.conftest import RuntimeFactory
from tests.fakes.model import FakeModelServer, RequestJSON, text
from tests.pg import fresh_pg_database
from tests.polling import eventually

MAIN = "agent:main:main"
BOB = "agent:main:dm:bob"


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


async def send(rt: Runtime, **args: Any) -> dict[str, Any]:
    entry = await rt.services.ensure_session(MAIN)
    ctx = rt.services.context_for(entry)
    return await rt.tools.invoke(rt.tool_env, "sessions_send", {"sessionKey": BOB, **args}, ctx)


async def texts(rt: Runtime, key: str) -> list[str]:
    entry = await rt.store.get_session(key)
    assert entry is not None
    return [m.plain_text() for m in await rt.store.history(entry.session_id)]


async def test_notify_adds_context_and_starts_no_turn(
    start: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await start()
    out = await send(rt, message="the launch moved to May", mode="notify")
    assert out == {"status": "ok", "mode": "notify"}
    assert await texts(rt, BOB) == [
        f"[Inter-session message from {MAIN}; no reply expected]\nthe launch moved to May"
    ]
    assert await rt.store.last_run(BOB) is None and fake_model.requests == []


async def test_steer_is_run_when_idle_and_joins_a_running_turn(
    start: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    gate = asyncio.Event()

    async def responder(req: RequestJSON) -> Any:
        if "hold on" in str(req["messages"]):
            await gate.wait()
            return text("held")
        return None

    fake_model.set_responder(responder)
    rt = await start({"session": {"agentToAgent": {"maxPingPongTurns": 0}}})
    idle = await send(rt, message="ping", mode="steer", timeoutSeconds=30)
    assert idle["status"] == "ok" and idle["reply"] == "echo: ping"  # as `run`
    first = await send(rt, message="hold on", timeoutSeconds=0)
    assert first["status"] == "accepted"

    async def running() -> bool:
        return (await rt.store.session_activity(BOB)).running > 0

    await eventually(running, timeout=30, what="the held turn runs")
    steered = await send(rt, message="also this", mode="steer")
    assert set(steered) == {"status", "mode", "runId"}
    assert (steered["status"], steered["mode"]) == ("accepted", "steer")
    gate.set()

    async def answered() -> bool:
        return "also this" in " ".join(await texts(rt, BOB))

    await eventually(answered, timeout=30, what="the steered message reaches the session")
