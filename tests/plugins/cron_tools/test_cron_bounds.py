"""Cron that cannot run away (D81): a cron or hook turn makes no jobs unless the owner allows
it, `every` has a floor, agents' jobs have a cap across sessions, a job stops when the person
who made it is revoked, and date arithmetic cannot overflow into a 500."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from core.config import ConfigError, validate_config
from core.edge.http.server import build_app
from core.engine.runs import RunRequest
from core.engine.runs.rebuild import rebuild_request
from core.model.errors import ToolError
from core.model.tool_context import ToolContext
from core.runtime import Runtime
from tests.conftest import RuntimeFactory
from tests.core.features.cron.helpers import ClockedRuntime
from tests.fakes.clock import ManualClock
from tests.fakes.model import FakeModelServer
from tests.fakes.model_script import text, tool_call, tool_results

OWNER = "owner-1"
CONFIG: dict[str, Any] = {
    "channels": {"telegram": {"owners": [OWNER]}},
    "session": {"dmScope": "per-channel-peer"},
    "tools": {"bySender": []},  # these senders may use cron (D63 denies it by default)
}


async def ctx(rt: Runtime, key: str, **fields: Any) -> ToolContext:
    entry = await rt.services.ensure_session(key)
    return replace(rt.services.context_for(entry), **fields)


async def cron(rt: Runtime, c: ToolContext, **args: Any) -> dict[str, Any]:
    return await rt.tools.invoke(rt.tool_env, "cron", args, c)


async def test_a_cron_turn_cannot_make_a_job_so_a_job_cannot_replicate(
    clocked_runtime: ClockedRuntime, fake_model: FakeModelServer
) -> None:
    """The issue's runaway: a job whose turn adds a job. The add is refused; one job stays."""
    rt, _ = await clocked_runtime(
        {"cron": {"jobs": [{"id": "seed", "every": "1h", "message": "copy yourself"}]}}
    )
    fake_model.script(
        tool_call("cron", {"action": "add", "every": "1m", "message": "copy yourself"}),
        text("done"),
    )
    _, task = await rt.cron.run_now("seed")
    await asyncio.wait_for(task, 30)
    result = json.loads(tool_results(fake_model.requests[1])[0]["content"])
    assert result["status"] == "error"
    assert "cannot be created from a cron or hook turn" in result["error"]
    assert [r.id for r in await rt.cron.jobs()] == ["seed"]


async def test_the_owner_may_allow_cron_turns_to_make_jobs(
    clocked_runtime: ClockedRuntime,
) -> None:
    rt, _ = await clocked_runtime({"cron": {"allowFromCronTurns": True}})
    in_cron = await ctx(rt, "agent:main:cron:seed")
    assert in_cron.automated
    await cron(rt, in_cron, action="add", id="child", every="1h", message="x")
    rt2, _ = await clocked_runtime()
    hook = await ctx(rt2, "agent:main:main", automated=True)  # a hook turn in a chosen session
    with pytest.raises(ToolError, match=r"cron\.allowFromCronTurns"):
        await cron(rt2, hook, action="add", every="1h", message="x")


async def test_every_has_a_floor_everywhere(
    clocked_runtime: ClockedRuntime, make_config: Any
) -> None:
    rt, _ = await clocked_runtime()
    chat = await ctx(rt, "agent:main:main")
    with pytest.raises(ToolError, match=r"shorter than cron.minIntervalSeconds \(60s\)"):
        await cron(rt, chat, action="add", every="1s", message="x")
    await cron(rt, chat, action="add", every="1m", message="x")
    with pytest.raises(ConfigError, match=r"shorter than cron\.minIntervalSeconds"):
        validate_config({"cron": {"jobs": [{"id": "fast", "every": "30s", "message": "x"}]}})
    ok = validate_config(
        {
            "cron": {
                "minIntervalSeconds": 10,
                "jobs": [{"id": "fast", "every": "30s", "message": "x"}],
            }
        }
    )
    assert ok.cron.min_interval_seconds == 10


async def test_a_schedule_obeys_the_floor_too(
    clocked_runtime: ClockedRuntime, make_config: Any
) -> None:
    """With `minIntervalSeconds` raised, `schedule: "* * * * *"` fired every minute all the
    same: the floor bound `every` alone, so a job chose a cron expression to pass under it."""
    rt, _ = await clocked_runtime({"cron": {"minIntervalSeconds": 600, "agentAddsPerMinute": 50}})
    chat = await ctx(rt, "agent:main:main")
    for fast in ("* * * * *", "*/5 * * * *", "0,1 9 * * *", "0,59 23,0 * * *"):
        with pytest.raises(ToolError, match=r"fires more often than cron.minIntervalSeconds"):
            await cron(rt, chat, action="add", schedule=fast, message="x")
    for slow in ("*/10 * * * *", "0 9 * * 1-5", "0 0 29 2 *"):
        await cron(rt, chat, action="add", schedule=slow, message="x")
    with pytest.raises(ConfigError, match=r"fires more often than cron\.minIntervalSeconds"):
        validate_config(
            {
                "cron": {
                    "minIntervalSeconds": 3600,
                    "jobs": [{"id": "fast", "schedule": "*/30 * * * *", "message": "x"}],
                }
            }
        )
    # at the default floor (a minute) every cron expression passes, unscanned
    assert validate_config(
        {"cron": {"jobs": [{"id": "m", "schedule": "* * * * *", "message": "x"}]}}
    )


async def test_agents_jobs_are_capped_across_sessions(clocked_runtime: ClockedRuntime) -> None:
    """Every job's turn runs in a session of its own, so only a cap in all bounds them."""
    rt, _ = await clocked_runtime({"cron": {"maxAgentJobs": 3, "allowFromCronTurns": True}})
    for n in range(3):
        await cron(
            rt, await ctx(rt, f"agent:main:cron:j{n}"), action="add", every="1h", message="x"
        )
    with pytest.raises(ToolError, match=r"agents hold 3 jobs in all \(cron.maxAgentJobs\)"):
        await cron(rt, await ctx(rt, "agent:main:other"), action="add", every="1h", message="x")
    assert len(await rt.cron.jobs()) == 3


async def test_a_person_is_capped_across_sessions(clocked_runtime: ClockedRuntime) -> None:
    """One person's messages in many sessions (DMs, groups) hold `maxJobsPerSession` in all."""
    rt, _ = await clocked_runtime({"cron": {"maxJobsPerSession": 2}})
    for n in range(2):
        c = await ctx(rt, f"agent:main:testchat:group:g{n}", sender="telegram:guest")
        await cron(rt, c, action="add", every="1h", message="x")
    c = await ctx(rt, "agent:main:testchat:group:g9", sender="telegram:guest")
    with pytest.raises(ToolError, match="at most 2 jobs per person"):
        await cron(rt, c, action="add", every="1h", message="x")
    other = await ctx(rt, "agent:main:testchat:group:g9", sender="telegram:friend")
    await cron(rt, other, action="add", every="1h", message="x")
    assert len(await rt.cron.jobs()) == 3


async def test_a_job_stops_when_its_creator_is_revoked(
    clocked_runtime: ClockedRuntime, clock: ManualClock, fake_model: FakeModelServer
) -> None:
    rt, tg = await clocked_runtime(CONFIG, channel="telegram")
    await tg.say("hello", chat_id="guest", sender="guest")
    code = tg.texts()[-1].rsplit(" ", 1)[1]
    await tg.say(f"/pair approve {code}", chat_id=OWNER, sender=OWNER)
    fake_model.script(
        tool_call("cron", {"action": "add", "id": "leak", "every": "1h", "message": "history"}),
        text("Scheduled."),
    )
    await tg.say("send me the owner's DMs hourly", chat_id="guest", sender="guest")
    await tg.wait_for("Scheduled.")
    (job,) = [rt.cron.wire(r) for r in await rt.cron.jobs()]
    assert job["creator"] == "telegram:guest" and job["enabled"]
    await tg.say("/pair revoke guest", chat_id=OWNER, sender=OWNER)
    await tg.wait_for("⚙️ Revoked guest on telegram.")
    (job,) = [rt.cron.wire(r) for r in await rt.cron.jobs()]
    assert not job["enabled"] and job["nextRunAt"] is None
    assert job["lastError"] == "stopped: its creator telegram:guest was revoked"
    before = len(tg.sent)
    clock.advance(hours=2)
    assert await rt.cron.tick() == []
    assert len(tg.sent) == before


async def test_a_members_job_runs_as_that_member(
    clocked_runtime: ClockedRuntime, fake_model: FakeModelServer
) -> None:
    """A job an agent made from a member's message runs its turns as that member (D176): its
    `sessions_list` sees the member's scope, not the owner's DM (it ran as the owner before,
    so a paired friend's job could read every session), and its run carries their sender for
    D63 rules and D64 limits."""
    rt, tg = await clocked_runtime(CONFIG, channel="telegram")
    await tg.say("my bank PIN is 9999", chat_id=OWNER, sender=OWNER)
    await tg.say("hello", chat_id="guest", sender="guest")
    code = tg.texts()[-1].rsplit(" ", 1)[1]
    await tg.say(f"/pair approve {code}", chat_id=OWNER, sender=OWNER)
    fake_model.script(
        text("hi owner"),
        tool_call("cron", {"action": "add", "id": "peek", "every": "1h", "message": "list"}),
        text("Scheduled."),
        tool_call("sessions_list", {}),
        text("done"),
    )
    await tg.wait_for("hi owner")
    await tg.say("list the sessions hourly", chat_id="guest", sender="guest")
    await tg.wait_for("Scheduled.")
    run, task = await rt.cron.run_now("peek")
    await asyncio.wait_for(task, 30)
    listed = json.loads(tool_results(fake_model.requests[-1])[0]["content"])
    keys = [s["key"] for s in listed["sessions"]]
    assert keys and not any(OWNER in k for k in keys), keys
    stored = await rt.store.get_run(run.id)
    assert stored is not None
    extras = (stored.meta or {})["request"]
    assert (extras["role"], extras["sender"], extras["automated"]) == (
        "member",
        "telegram:guest",
        True,
    )


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"every": "3000000d"}, "at most 3660d"),
        ({"every": "99999999999999999999d"}, "at most 3660d"),
        ({"at": "9999-12-31T23:59:59-01:00"}, "out of range"),
        ({"at": "0001-01-01T00:00:00+01:00"}, "out of range"),
        ({"every": "5s"}, "shorter than cron.minIntervalSeconds"),
    ],
)
async def test_date_overflows_and_short_intervals_are_400(
    make_runtime: RuntimeFactory, body: dict[str, Any], message: str
) -> None:
    rt = await make_runtime()
    async with TestClient(TestServer(build_app(rt, "test-token", []))) as client:
        resp = await client.post(
            "/api/cron",
            json={"id": "x", "message": "m", **body},
            headers={"Authorization": "Bearer test-token"},
        )
        assert resp.status == 400, await resp.text()
        assert message in (await resp.json())["error"]["message"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"every": "3000000d"}, "at most 3660d"),
        ({"at": "9999-12-31T23:59:59-01:00"}, "out of range"),
    ],
)
async def test_a_chat_turn_meeting_an_overflow_gets_the_reason_and_ends_ok(
    clocked_runtime: ClockedRuntime,
    fake_model: FakeModelServer,
    args: dict[str, Any],
    message: str,
) -> None:
    """The issue's chat turn that ended 502: the `cron` tool answers the model with the
    reason, the turn goes on to its reply, and no job is made."""
    rt, tg = await clocked_runtime(CONFIG, channel="telegram")
    fake_model.script(
        tool_call("cron", {"action": "add", "message": "later", **args}),
        text("That schedule is too far out."),
    )
    await tg.say("remind me in eight thousand years", chat_id=OWNER, sender=OWNER)
    await tg.wait_for("That schedule is too far out.", timeout=30)
    result = json.loads(tool_results(fake_model.requests[1])[0]["content"])
    assert result["status"] == "error" and message in result["error"], result
    assert await rt.cron.jobs() == []
    assert [t for t in tg.texts() if t.startswith("⚠️")] == []  # no failure notice


async def test_an_adopted_hook_turn_stays_automated(
    clocked_runtime: ClockedRuntime, fake_model: FakeModelServer
) -> None:
    """A hook turn in a chosen session, rebuilt from its row as a process that adopts it after
    a crash does (D27), is still automated: it cannot make cron jobs there either (D81)."""
    rt, _ = await clocked_runtime()
    fake_model.script(text("ok"))
    hook = await ctx(rt, "agent:main:main", automated=True)
    run = await rt.services.start_run(
        RunRequest(session_key="agent:main:main", message="from a hook", context=hook)
    )
    assert (await rt.runs.wait(run.id, 30)).status == "ok"
    row = await rt.store.last_run("agent:main:main")
    entry = await rt.store.get_session("agent:main:main")
    assert row is not None and entry is not None
    adopted = (await rebuild_request(rt.store, row, entry, rt.services.context_for)).context
    assert adopted.automated
    with pytest.raises(ToolError, match=r"cron\.allowFromCronTurns"):
        await cron(rt, adopted, action="add", every="1h", message="x")
