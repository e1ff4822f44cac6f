"""`sessions_send` `mode` (D70) on SQLite and PostgreSQL: `notify` adds context and starts no
turn; `steer` is accepted into a running turn, and behaves as `run` when the target is idle."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from core.runtime import Runtime
from tests.conftest import RuntimeFactory
from tests.fakes.model import FakeModelServer, RequestJSON, text, tool_call, tool_results
from tests.fakes.model_script import Responder
from tests.pg import fresh_pg_database
from tests.polling import eventually

MAIN = "agent:main:main"
BOB = "agent:main:dm:bob"


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

    async def running() -> bool:  # the held turn itself, not the idle send's announce step
        return (await rt.store.session_activity(BOB)).running > 0 and any(
            "hold on" in json.dumps(r["messages"]) for r in fake_model.requests
        )

    await eventually(running, timeout=30, what="the held turn runs")
    steered = await send(rt, message="also this", mode="steer")
    assert set(steered) == {"status", "mode", "runId"}
    assert (steered["status"], steered["mode"]) == ("accepted", "steer")
    gate.set()

    async def answered() -> bool:
        return "also this" in " ".join(await texts(rt, BOB))

    await eventually(answered, timeout=30, what="the steered message reaches the session")


def held_then_told(gate: asyncio.Event) -> Responder:
    """The fake model for a held turn: its first request ("work on it") waits for `gate`, then
    calls a tool; the next answers whether a steer ("also this") reached it."""

    async def responder(req: RequestJSON) -> Any:
        said = json.dumps(req["messages"])
        if "work on it" not in said:
            return None
        if not tool_results(req):
            await gate.wait()  # the first request of the held turn
            return tool_call("agents_list", {})
        return text("steered" if "also this" in said else "not steered")

    return responder


async def test_steer_joins_the_running_turn_before_its_next_model_request(
    start: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    """D114: whatever the target's busy-input mode (here the default, `queue`), a steer sent
    while its turn runs is in that turn's next model request, and starts no turn of its own."""
    gate = asyncio.Event()
    fake_model.set_responder(held_then_told(gate))
    rt = await start({"session": {"agentToAgent": {"maxPingPongTurns": 0}}})
    first = await send(rt, message="work on it", timeoutSeconds=0)
    assert first["status"] == "accepted"

    async def held() -> bool:
        return any("work on it" in json.dumps(r["messages"]) for r in fake_model.requests)

    await eventually(held, timeout=30, what="the held turn asks the model")
    steered = await send(rt, message="also this", mode="steer")
    assert (steered["status"], steered["mode"]) == ("accepted", "steer")
    gate.set()
    outcome = await rt.runs.wait(first["runId"], 30)
    assert (outcome.status, outcome.reply) == ("ok", "steered")
    joined = [r for r in fake_model.requests if "also this" in json.dumps(r["messages"])]
    assert len(joined) == 1 and tool_results(joined[0])  # the turn's second request
    assert f"[Inter-session message from {MAIN}]\\nalso this" in json.dumps(joined[0])
    run = await rt.store.get_run(steered["runId"])
    assert run is not None and (run.status, run.error) == ("aborted", "merged")


@pytest.mark.postgres
async def test_a_steer_sent_on_another_process_joins_the_running_turn(
    make_runtime: RuntimeFactory,
    fake_model: FakeModelServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """D114 across processes (two runtimes on one PostgreSQL database): a steer queued on B
    while A runs the target's turn is in that turn's next model request, not a turn after it."""
    # two runtimes in one OS process: neither may take the other for a dead process of this pid
    monkeypatch.setattr("core.engine.cluster.processes._pid_alive", lambda pid: True)
    gate = asyncio.Event()
    fake_model.set_responder(held_then_told(gate))
    async with fresh_pg_database() as url:
        a, b = [
            await make_runtime(
                {
                    "gateway": {"stateDir": str(tmp_path / name), "database": {"url": url}},
                    "session": {"agentToAgent": {"maxPingPongTurns": 0}},
                }
            )
            for name in ("a", "b")
        ]
        first = await send(a, message="work on it", timeoutSeconds=0)

        async def held() -> bool:
            return any("work on it" in json.dumps(r["messages"]) for r in fake_model.requests)

        await eventually(held, timeout=30, what="A's held turn asks the model")
        steered = await send(b, message="also this", mode="steer")
        assert (steered["status"], steered["mode"]) == ("accepted", "steer")

        async def noted() -> bool:  # B's notice reaches A through PostgreSQL, a moment later
            return a.runs.steer_noted(a.keys.canonical(BOB))

        await eventually(noted, timeout=30, what="A hears of the steer queued on B")
        gate.set()
        outcome = await a.runs.wait(first["runId"], 30)
        assert (outcome.status, outcome.reply) == ("ok", "steered")
        run = await a.store.get_run(steered["runId"])
        assert run is not None and (run.status, run.error) == ("aborted", "merged")
