"""Restart, archive, lane limits and stopping (R4.8, R4.10, D7; acceptance 113, 114)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from core.config import CrosstalkConfig
from core.runtime import Runtime
from core.store.subagents import SubagentRecord
from tests.conftest import RuntimeFactory
from tests.core.features.subagents.helpers import (
    CHAT,
    OWNER_CONFIG,
    REQUESTER,
    RecordingAdapter,
    Script,
    is_child,
    record_state,
    spawn_tool,
    transcript,
)
from tests.fakes.model import FakeModelServer, Reply, RequestJSON, delay, text
from tests.polling import eventually as until
from tests.running import running


async def announce_rows(rt: Runtime) -> list[str]:
    return [d.text for d in await rt.store.list_deliveries(limit=1000) if d.kind == "announce"]


async def test_pending_announce_is_delivered_once_after_a_restart(
    make_config: Callable[..., CrosstalkConfig], fake_model: FakeModelServer
) -> None:
    config = make_config(OWNER_CONFIG)
    first_step = asyncio.Event()
    steps = 0

    def announce(_req: RequestJSON) -> Reply:
        nonlocal steps
        steps += 1
        if steps == 1:
            first_step.set()
            return delay(60, text("Result: never sent"))
        return text("Result: after the restart")

    fake_model.set_responder(Script(announce=announce))
    first = RecordingAdapter()
    async with running(config, first) as rt:
        await first.say("spawn a researcher")
        await asyncio.wait_for(first_step.wait(), 10)
        [rec] = await rt.store.list_subagent_runs()
        assert rec.outcome == "ok" and rec.announce_state == "running"
    assert first.texts("Status:") == []

    second = RecordingAdapter()
    async with running(config, second) as rt:
        [(target, posted)] = await second.wait_for("Status:")
        assert target.to == CHAT
        assert posted.startswith("Status: success\n\nResult:\nafter the restart\n")
        await record_state(rt, rec.run_id, ("done",))
        assert await announce_rows(rt) == [posted]
        msgs = await transcript(rt, REQUESTER)
        assert [m.plain_text() for m in msgs if m.meta and m.meta.get("announce")] == [posted]

    third = RecordingAdapter()
    async with running(config, third) as rt:
        assert await rt.store.list_subagent_runs(announce_states=("pending", "running")) == []
        await rt.subagents.sweeper.sweep()
        assert await announce_rows(rt) == [posted] and third.sent == []
    assert steps == 2


async def test_child_interrupted_by_a_restart_is_announced_as_error(
    make_config: Callable[..., CrosstalkConfig], fake_model: FakeModelServer
) -> None:
    config = make_config(OWNER_CONFIG)
    child_started = asyncio.Event()

    def child(_req: RequestJSON) -> Reply:
        child_started.set()
        return delay(60, text("never"))

    fake_model.set_responder(Script(child=child, announce=text("Result: lost my work")))
    first = RecordingAdapter()
    async with running(config, first) as rt:
        await first.say("spawn a researcher")
        await asyncio.wait_for(child_started.wait(), 10)
    second = RecordingAdapter()
    async with running(config, second) as rt:
        [(_, posted)] = await second.wait_for("Status:")
        assert posted.startswith("Status: error\n\nResult:\nlost my work\n\nNotes:\n- Error: ")
        [rec] = await rt.store.list_subagent_runs()
        assert rec.outcome == "aborted"


async def test_sweeper_archives_finished_children_only(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    gate = asyncio.Event()
    children = 0

    async def child(_req: RequestJSON) -> Reply:
        nonlocal children
        children += 1
        if children == 2:
            await gate.wait()
        return text("done")

    fake_model.set_responder(Script(child=child))
    rt = await make_runtime({"agents": {"defaults": {"subagents": {"archiveAfterMinutes": 1}}}})
    done = await spawn_tool(rt, label="first")
    await record_state(rt, done["runId"], ("done",))
    busy = await spawn_tool(rt, label="second")
    await fake_model.wait_for_requests(3)  # child 1, its announce step, child 2
    recs = {r.run_id: r for r in await rt.store.list_subagent_runs()}
    assert recs[done["runId"]].archive_at == recs[done["runId"]].created_at + 60_000
    for run_id in recs:
        await rt.store.update_subagent_run(run_id, archive_at=1)
    entry = await rt.store.get_session(done["childSessionKey"])
    assert entry is not None
    path = rt.store.transcript_path(entry.session_id)

    rt.subagents.sweeper.interval = 0.05
    rt.subagents.sweeper.wake()

    async def archived() -> bool:
        return await rt.store.get_session(done["childSessionKey"]) is None

    await until(archived, what="archive of the finished child")
    assert not path.exists() and list(path.parent.glob(f"{path.name}.deleted.*"))
    # the running child is left alone by every sweep until it has finished and announced
    assert await rt.subagents.sweeper.sweep() == 0
    assert await rt.store.get_session(busy["childSessionKey"]) is not None
    gate.set()

    async def busy_archived() -> bool:
        return await rt.store.get_session(busy["childSessionKey"]) is None

    await until(busy_archived, what="archive of the second child after it finished")
    assert len(await announce_rows(rt)) == 2
    assert await rt.store.list_subagent_runs() == []


async def test_max_concurrent_queues_subagent_runs(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    gate = asyncio.Event()

    async def child(_req: RequestJSON) -> Reply:
        await gate.wait()
        return text("done")

    fake_model.set_responder(Script(child=child))
    rt = await make_runtime({"agents": {"defaults": {"subagents": {"maxConcurrent": 1}}}})
    one = await spawn_tool(rt, label="one")
    two = await spawn_tool(rt, label="two")
    await fake_model.wait_for_requests(1)
    run_one, run_two = await rt.store.get_run(one["runId"]), await rt.store.get_run(two["runId"])
    assert run_one is not None and run_one.status == "running"
    assert run_two is not None and run_two.status == "queued"
    assert rt.runs.is_active(two["childSessionKey"])
    assert len([r for r in fake_model.requests if is_child(r)]) == 1
    gate.set()
    for out in (one, two):
        await record_state(rt, out["runId"], ("done",))
    assert len([r for r in fake_model.requests if is_child(r)]) == 2


async def test_stop_in_the_requester_chat_stops_its_subagents(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    gate = asyncio.Event()

    async def child(_req: RequestJSON) -> Reply:
        await gate.wait()
        return text("done")

    fake_model.set_responder(Script(child=child))
    adapter = RecordingAdapter()
    rt = await make_runtime(
        {**OWNER_CONFIG, "agents": {"defaults": {"subagents": {"maxConcurrent": 1}}}},
        adapters=[adapter],
    )
    # one running and one waiting for the lane: both count
    outs = [await spawn_tool(rt, label=f"s{i}") for i in (1, 2)]
    await fake_model.wait_for_requests(1)
    await adapter.say("/stop")
    assert adapter.sent[-1][1] == "⚙️ Agent was aborted. Stopped 2 sub-agents."

    async def recorded() -> bool:
        recs = await rt.store.list_subagent_runs()
        return all(r.outcome == "aborted" for r in recs)

    await until(recorded, what="aborted outcomes")
    recs: list[SubagentRecord] = await rt.store.list_subagent_runs()
    assert {r.announce_state for r in recs} == {"stopped"}
    assert {r.run_id for r in recs} == {o["runId"] for o in outs}
    assert await announce_rows(rt) == []
    await adapter.say("/stop")
    assert adapter.sent[-1][1] == "⚙️ Nothing to stop."
    gate.set()


async def test_stop_with_one_subagent_uses_the_singular(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    gate = asyncio.Event()

    async def child(_req: RequestJSON) -> Reply:
        await gate.wait()
        return text("done")

    fake_model.set_responder(Script(child=child))
    adapter = RecordingAdapter()
    rt = await make_runtime(OWNER_CONFIG, adapters=[adapter])
    await spawn_tool(rt)
    await fake_model.wait_for_requests(1)
    assert await rt.subagents.stop_of("agent:main:other") == 0
    await adapter.say("/stop")
    assert adapter.sent[-1][1] == "⚙️ Agent was aborted. Stopped 1 sub-agent."
    gate.set()
