"""Run manager: FIFO per session, waits that survive the waiter, timeouts, restart recovery."""

from __future__ import annotations

from typing import Any

from core.engine.runs import RunRequest
from core.runtime import Runtime
from tests.conftest import ConfigFactory, RuntimeFactory
from tests.fakes.model import FakeModelServer, delay, text


async def test_runs_in_one_session_are_serialised_in_order(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await make_runtime()
    entry = await rt.services.ensure_session("agent:main:main")
    fake_model.script(delay(0.2, text("first")), text("second"))
    r1 = await rt.runs.submit(RunRequest(entry.key, "one", rt.services.context_for(entry)))
    r2 = await rt.runs.submit(RunRequest(entry.key, "two", rt.services.context_for(entry)))
    assert (await rt.runs.wait(r2.id, 10)).reply == "second"
    assert (await rt.runs.wait(r1.id, 0)).reply is None  # already ended: read from the store
    history = await rt.store.history(entry.session_id)
    # D13: each turn's input is directly followed by its reply
    assert [m.plain_text() for m in history] == ["one", "first", "two", "second"]

    def seen(request: dict[str, Any]) -> list[str]:
        return [str(m["content"]) for m in request["messages"] if m["role"] != "system"]

    # turn 1 did not see the queued "two"; turn 2 saw turn 1's exchange, then its own input
    assert seen(fake_model.requests[0]) == ["one"]
    assert seen(fake_model.requests[1]) == ["one", "first", "two"]


async def test_wait_timeout_then_wait_again_gets_the_final_status(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await make_runtime()
    entry = await rt.services.ensure_session("agent:main:main")
    fake_model.script(delay(0.3, text("late")))
    run = await rt.runs.submit(RunRequest(entry.key, "slow", rt.services.context_for(entry)))
    assert (await rt.runs.wait(run.id, 0.01)).status == "timeout"
    final = await rt.runs.wait(run.id, 10)
    assert final.status == "ok" and final.reply == "late"
    stored = await rt.store.get_run(run.id)
    assert stored is not None and stored.status == "ok" and stored.total_tokens == 15


async def test_run_timeout_aborts_the_turn(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await make_runtime()
    entry = await rt.services.ensure_session("agent:main:main")
    fake_model.script(delay(5, text("never")))
    run = await rt.runs.submit(
        RunRequest(entry.key, "x", rt.services.context_for(entry), timeout_seconds=0.2)
    )
    out = await rt.runs.wait(run.id, 10)
    assert out.status == "timeout" and "timed out" in (out.error or "")


async def test_no_model_configured_answers_with_instructions(make_config: ConfigFactory) -> None:
    from core.config import validate_config

    base = make_config().model_dump(by_alias=True, exclude_none=True)
    base.pop("models")
    base["agents"]["defaults"].pop("model")
    rt = Runtime(validate_config(base))
    await rt.start(probe_models=False)
    try:
        entry = await rt.services.ensure_session("agent:main:main")
        run = await rt.runs.submit(RunRequest(entry.key, "hi", rt.services.context_for(entry)))
        out = await rt.runs.wait(run.id, 10)
        assert out.status == "ok" and out.reply and "No model is configured" in out.reply
    finally:
        await rt.stop()


async def test_runs_in_flight_at_a_crash_are_aborted_on_start(
    make_config: ConfigFactory, fake_model: FakeModelServer
) -> None:
    config = make_config()
    rt = Runtime(config)
    await rt.start(probe_models=False)
    entry = await rt.services.ensure_session("agent:main:main")
    fake_model.script(delay(30, text("never")))
    run = await rt.runs.submit(RunRequest(entry.key, "in flight", rt.services.context_for(entry)))
    await fake_model.wait_for_requests(1)
    await rt.store.close()  # the process "dies": nothing gets to record the end of the run
    rt2 = Runtime(config)
    await rt2.start(probe_models=False)
    try:
        stored = await rt2.store.get_run(run.id)
        assert stored is not None and stored.status == "aborted"
        after = await rt2.store.get_session(entry.key)
        assert after is not None and after.aborted_last_run is True
        history = await rt2.store.history(after.session_id)
        assert [m.plain_text() for m in history] == ["in flight"]
    finally:
        await rt2.stop()
        await rt.background.cancel_all()
        await rt.runs.close()
