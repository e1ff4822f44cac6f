"""The cron scheduler under a manual clock: due jobs fire once, deliver through the gate, keep
their state; missed ticks collapse into one firing; one-shots go away; firings never overlap;
jobs and their state survive a restart."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest

from core.config.schema_cron import CronJobConfig
from core.features.cron.clock import to_ms
from core.runtime import Runtime
from tests.core.features.cron.helpers import ClockedRuntime
from tests.fakes.clock import ManualClock
from tests.fakes.model import FakeModelServer
from tests.fakes.model_script import RequestJSON, TextReply, error, last_user_text, text

CHAT = {"channel": "testchat", "to": "room-1"}


def job(**fields: Any) -> dict[str, Any]:
    return {
        "id": "nightly",
        "every": "10m",
        "message": "post the summary",
        "deliver": CHAT,
        **fields,
    }


async def fire(rt: Runtime) -> int:
    """One scheduler tick; waits for the firings it started; returns how many."""
    tasks = await rt.cron.tick()
    await asyncio.gather(*tasks)
    return len(tasks)


async def test_due_job_runs_in_its_cron_session_and_delivers_through_the_gate(
    clocked_runtime: ClockedRuntime, clock: ManualClock
) -> None:
    rt, chat = await clocked_runtime({"cron": {"jobs": [job()]}})
    t0 = clock.now()
    rec = await rt.cron.get("nightly")
    assert rec.next_run_at == to_ms(t0 + timedelta(minutes=10))
    assert await fire(rt) == 0  # not due yet
    clock.advance(minutes=10)
    assert await fire(rt) == 1
    assert chat.texts() == ["echo: post the summary"]
    target, _ = chat.sent[0]
    assert (target.channel, target.to) == ("testchat", "room-1")
    rec = await rt.cron.get("nightly")
    wire = rt.cron.wire(rec, runs=True)
    assert wire["lastStatus"] == "ok" and wire["lastRunAt"] == to_ms(clock.now())
    assert wire["nextRunAt"] == to_ms(clock.now() + timedelta(minutes=10))
    assert wire["running"] is False
    assert wire["runs"][0]["status"] == "ok" and wire["runs"][0]["delivery"] == "delivered"
    deliveries = await rt.store.list_deliveries(session_key="agent:main:cron:nightly")
    assert [(d.kind, d.outcome) for d in deliveries] == [("cron", "delivered")]
    main = await rt.services.ensure_session("agent:main:main")
    listed = await rt.tools.invoke(
        rt.tool_env, "sessions_list", {"kinds": ["cron"]}, rt.services.context_for(main, via="http")
    )
    assert [(r["key"], r["kind"], r["channel"]) for r in listed["sessions"]] == [
        ("agent:main:cron:nightly", "cron", "internal")
    ]


async def test_missed_ticks_fire_once_and_jobs_survive_a_restart(
    clocked_runtime: ClockedRuntime, clock: ManualClock
) -> None:
    rt, _ = await clocked_runtime({"cron": {"jobs": [job()]}})
    await rt.cron.add(
        CronJobConfig.model_validate(
            {
                "id": "added",
                "schedule": "30 9 * * *",
                "tz": "Europe/Paris",
                "message": "hello",
                "deliver": CHAT,
            }
        ),
        source="api",
    )
    await rt.stop()
    clock.advance(hours=3)  # 08:00 → 11:00 UTC: 18 ticks of `nightly`; 09:30 Paris is 08:30 UTC
    rt2, chat2 = await clocked_runtime({"cron": {"jobs": [job()]}})
    assert {r.id for r in await rt2.cron.jobs()} == {"nightly", "added"}
    assert await fire(rt2) == 2  # each job once, not once per missed tick
    assert sorted(chat2.texts()) == ["echo: hello", "echo: post the summary"]
    assert await fire(rt2) == 0
    added = await rt2.cron.get("added")
    assert added.next_run_at == to_ms(clock.now().replace(hour=8, minute=30) + timedelta(days=1))
    nightly = await rt2.cron.get("nightly")
    assert nightly.next_run_at == to_ms(clock.now() + timedelta(minutes=10))


async def test_one_shot_fires_once_and_is_removed(
    clocked_runtime: ClockedRuntime, clock: ManualClock
) -> None:
    rt, chat = await clocked_runtime()
    at = (clock.now() + timedelta(hours=1)).isoformat()
    await rt.cron.add(
        CronJobConfig.model_validate(
            {"id": "once", "at": at, "message": "remind me", "deliver": CHAT}
        ),
        source="api",
    )
    clock.advance(minutes=59)
    assert await fire(rt) == 0
    clock.advance(minutes=1)
    assert await fire(rt) == 1
    assert chat.texts() == ["echo: remind me"]
    assert await rt.store.get_job("once") is None
    clock.advance(days=1)
    assert await fire(rt) == 0


async def test_a_running_job_does_not_overlap_itself(
    clocked_runtime: ClockedRuntime, clock: ManualClock, fake_model: FakeModelServer
) -> None:
    release = asyncio.Event()
    calls: list[str] = []

    async def slow(request: RequestJSON) -> TextReply:
        calls.append(last_user_text(request))
        await release.wait()
        return text("done")

    fake_model.set_responder(slow)
    rt, chat = await clocked_runtime({"cron": {"jobs": [job(every="1m")]}})
    clock.advance(minutes=1)
    first = await rt.cron.tick()
    assert len(first) == 1
    await fake_model.wait_for_requests(1)
    assert (await rt.cron.get("nightly")).running_since is not None
    for _ in range(3):
        clock.advance(minutes=1)
        assert await rt.cron.tick() == []  # due again, but still running
    release.set()
    await asyncio.gather(*first)
    assert calls == ["post the summary"] and chat.texts() == ["done"]
    assert await fire(rt) == 0  # next tick is a minute after the finished firing
    clock.advance(minutes=1)
    assert await fire(rt) == 1


async def test_deny_rule_suppresses_the_delivery_and_the_run_still_counts_ok(
    clocked_runtime: ClockedRuntime, clock: ManualClock
) -> None:
    rt, chat = await clocked_runtime(
        {
            "cron": {"jobs": [job()]},
            "session": {
                "sendPolicy": {"rules": [{"action": "deny", "match": {"channel": "testchat"}}]}
            },
        }
    )
    clock.advance(minutes=10)
    assert await fire(rt) == 1
    assert chat.sent == []
    deliveries = await rt.store.list_deliveries(session_key="agent:main:cron:nightly")
    assert [(d.kind, d.outcome) for d in deliveries] == [("cron", "suppressed_by_policy")]
    rec = await rt.cron.get("nightly")
    assert rec.last_status == "ok"


async def test_a_failed_turn_sets_last_status_error(
    clocked_runtime: ClockedRuntime, clock: ManualClock, fake_model: FakeModelServer
) -> None:
    fake_model.script(error(500, "boom"))
    rt, chat = await clocked_runtime({"cron": {"jobs": [job(deliver="none")]}})
    clock.advance(minutes=10)
    assert await fire(rt) == 1
    rec = await rt.cron.get("nightly")
    assert rec.last_status == "error"
    assert rec.last_error == (
        "⚠️ The model provider failed (HTTP 500). Details are in the gateway log."
    )
    assert rec.last_run_at == to_ms(clock.now())
    assert chat.sent == []


async def test_manual_run_disable_and_enable(
    clocked_runtime: ClockedRuntime, clock: ManualClock
) -> None:
    rt, chat = await clocked_runtime({"cron": {"jobs": [job(every="1h")]}})
    run, task = await rt.cron.run_now("nightly")
    await task
    assert chat.texts() == ["echo: post the summary"]
    rec = await rt.cron.get("nightly")
    assert rec.runs and rec.runs[-1]["trigger"] == "manual" and rec.runs[-1]["runId"] == run.id
    assert rec.next_run_at == to_ms(clock.now() + timedelta(hours=1))  # schedule unchanged
    await rt.cron.set_enabled("nightly", False)
    clock.advance(hours=5)
    assert await fire(rt) == 0
    await rt.cron.set_enabled("nightly", True)  # missed while disabled: not fired
    assert await fire(rt) == 0
    assert (await rt.cron.get("nightly")).next_run_at == to_ms(clock.now() + timedelta(hours=1))


async def test_a_config_job_for_an_unknown_agent_stops_the_start(
    clocked_runtime: ClockedRuntime,
) -> None:
    from core.model.errors import CrosstalkError

    with pytest.raises(CrosstalkError, match=r"cron\.jobs nightly: unknown agent: ghost"):
        await clocked_runtime(
            {"agents": {"list": [{"id": "main"}]}, "cron": {"jobs": [job(agentId="ghost")]}}
        )


async def test_a_job_removed_while_it_runs_leaves_its_successor_alone(
    clocked_runtime: ClockedRuntime, clock: ManualClock, fake_model: FakeModelServer
) -> None:
    """Removing a running job and adding another under its id: the old firing, finishing,
    rescheduled the new job on the old schedule and put its run in the new job's history; a
    one-shot's firing deleted the new job outright."""
    release = asyncio.Event()

    async def slow(request: RequestJSON) -> TextReply:
        if last_user_text(request) == "old":
            await release.wait()
        return text("done")

    fake_model.set_responder(slow)
    rt, chat = await clocked_runtime()
    soon = (clock.now() + timedelta(minutes=2)).isoformat()
    for old in ({"every": "1m"}, {"every": None, "at": soon}):
        release.clear()
        await rt.cron.add(CronJobConfig.model_validate(job(message="old", **old)), source="api")
        clock.advance(minutes=1)
        running = await rt.cron.tick()
        assert len(running) == 1
        await fake_model.wait_for_requests(len(fake_model.requests) + 1)
        await rt.cron.remove("nightly")
        new = await rt.cron.add(
            CronJobConfig.model_validate(job(message="new", every="1h")), source="api"
        )
        release.set()
        await asyncio.gather(*running)
        after = await rt.cron.get("nightly")  # still there, on its own schedule, no history
        assert (after.next_run_at, after.runs or [], after.spec["message"]) == (
            new.next_run_at,
            [],
            "new",
        )
        await rt.cron.remove("nightly")
    assert chat.texts() == ["done", "done"]  # the removed jobs' firings still delivered
