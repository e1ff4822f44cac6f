"""The agent tool `cron` end to end (fake model → tool → store → scheduler → gate → chat), and
its ownership, defaults and limits; plus the owner's `/cron` chat command."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from typing import Any

import pytest

from core.model.errors import ToolError
from core.model.roles import Role
from core.model.tool_context import ToolContext
from core.runtime import Runtime
from tests.core.features.cron.helpers import ClockedRuntime
from tests.fakes.clock import ManualClock
from tests.fakes.model import FakeModelServer
from tests.fakes.model_script import text, tool_call, tool_results

OWNER = "owner-1"
CONFIG: dict[str, Any] = {
    "channels": {"telegram": {"owners": [OWNER], "dmPolicy": "open"}},
    "session": {"dmScope": "per-channel-peer"},
    "tools": {"bySender": []},  # these senders may use cron (D63 denies it by default)
}
OWNER_KEY = "agent:main:telegram:dm:owner-1"
GUEST_KEY = "agent:main:telegram:dm:guest"


async def ctx(
    rt: Runtime, key: str, *, owner: bool = False, sandboxed: bool = False, route: str | None = None
) -> ToolContext:
    await rt.services.ensure_session(key)
    if route is not None:
        await rt.store.update_session(key, last_channel="telegram", last_to=route)
    entry = await rt.store.get_session(key)
    assert entry is not None
    role: Role = "owner" if owner else "member"
    return replace(rt.services.context_for(entry, role=role), sandboxed=sandboxed)


async def cron(rt: Runtime, c: ToolContext, **args: Any) -> dict[str, Any]:
    return await rt.tools.invoke(rt.tool_env, "cron", args, c)


async def test_agent_sets_a_reminder_that_fires_into_the_same_chat(
    clocked_runtime: ClockedRuntime, clock: ManualClock, fake_model: FakeModelServer
) -> None:
    fake_model.script(
        tool_call(
            "cron", {"action": "add", "at": "2026-11-23T09:00:00Z", "message": "Time to stand up!"}
        ),
        text("Reminder set for 09:00."),
    )
    rt, chat = await clocked_runtime(CONFIG, channel="telegram")
    await chat.say("remind me at 9 to stand up", chat_id=OWNER, sender=OWNER)
    await chat.wait_for("Reminder set")
    result = tool_results(fake_model.requests[1])[0]["content"]
    assert json.loads(result)["status"] == "ok"
    (job,) = [rt.cron.wire(r) for r in await rt.cron.jobs()]
    assert job["createdBy"] == OWNER_KEY and job["source"] == "agent"
    assert job["deliver"] == {"channel": "telegram", "to": OWNER, "accountId": "default"}
    clock.advance(minutes=59)
    assert await rt.cron.tick() == []
    clock.advance(minutes=1)
    await asyncio.gather(*await rt.cron.tick())
    ((target, said),) = chat.sent[1:]
    assert said == "echo: Time to stand up!" and target.to == OWNER
    assert await rt.cron.jobs() == []  # one-shot removed
    main = await ctx(rt, "agent:main:main")
    listed = await rt.tools.invoke(
        rt.tool_env, "sessions_list", {"kinds": ["cron"]}, replace(main, via="http")
    )
    assert [(r["kind"], r["channel"]) for r in listed["sessions"]] == [("cron", "internal")]


async def test_jobs_belong_to_their_session(clocked_runtime: ClockedRuntime) -> None:
    rt, _ = await clocked_runtime(CONFIG, channel="telegram")
    guest = await ctx(rt, GUEST_KEY, route="guest")
    owner = await ctx(rt, OWNER_KEY, owner=True, route=OWNER)
    g = await cron(rt, guest, action="add", id="g1", every="1h", message="drink water")
    assert g["job"]["deliver"] == {"channel": "telegram", "to": "guest"}
    await cron(rt, owner, action="add", id="o1", schedule="0 9 * * *", message="news")
    assert [j["id"] for j in (await cron(rt, guest, action="list"))["jobs"]] == ["g1"]
    assert [j["id"] for j in (await cron(rt, owner, action="list"))["jobs"]] == ["g1", "o1"]
    sandboxed_owner = replace(owner, sandboxed=True)
    assert [j["id"] for j in (await cron(rt, sandboxed_owner, action="list"))["jobs"]] == ["o1"]
    with pytest.raises(ToolError, match="cron job not found: o1"):
        await cron(rt, guest, action="remove", id="o1")
    assert (await cron(rt, owner, action="remove", id="g1")) == {"status": "ok", "removed": "g1"}
    assert [r.id for r in await rt.cron.jobs()] == ["o1"]


async def test_defaults_and_refusals(clocked_runtime: ClockedRuntime) -> None:
    rt, _ = await clocked_runtime(
        {**CONFIG, "cron": {"maxJobsPerSession": 2, "agentAddsPerMinute": 2}}
    )
    routeless = await ctx(rt, "agent:main:main")
    job = (await cron(rt, routeless, action="add", every="10m", message="tick"))["job"]
    assert job["deliver"] == "none" and job["id"].startswith("reminder-")
    with pytest.raises(ToolError, match="invalid id"):
        await cron(rt, routeless, action="add", id="Bad!", every="1m", message="x")
    with pytest.raises(ToolError, match="exactly one of schedule, every or at"):
        await cron(rt, routeless, action="add", message="x")
    with pytest.raises(ToolError, match="message required"):
        await cron(rt, routeless, action="add", every="1m")
    sandboxed = await ctx(rt, GUEST_KEY, sandboxed=True, route="guest")
    with pytest.raises(ToolError, match="only to their own chat"):
        await cron(
            rt,
            sandboxed,
            action="add",
            every="1m",
            message="x",
            deliver={"channel": "telegram", "to": "someone-else"},
        )
    await cron(rt, routeless, action="add", every="1m", message="second")
    with pytest.raises(ToolError, match="at most 2 jobs per session"):
        await cron(rt, routeless, action="add", every="1m", message="third")
    other = await ctx(rt, "agent:main:other")
    await cron(rt, other, action="add", every="1m", message="a")
    await cron(
        rt, other, action="remove", id=(await cron(rt, other, action="list"))["jobs"][0]["id"]
    )
    await cron(rt, other, action="add", every="1m", message="b")
    with pytest.raises(ToolError, match="rate limited"):
        await cron(rt, other, action="add", every="1m", message="c")


async def test_cron_chat_command_is_owner_only(clocked_runtime: ClockedRuntime) -> None:
    rt, chat = await clocked_runtime(
        {**CONFIG, "cron": {"jobs": [{"id": "cfg", "every": "1h", "message": "x"}]}},
        channel="telegram",
    )
    guest = await ctx(rt, GUEST_KEY, route="guest")
    await cron(rt, guest, action="add", id="g1", at="2026-12-01T09:00:00+01:00", message="y")
    await chat.say("/cron list", chat_id="guest", sender="guest")
    await chat.say("/cron list", chat_id=OWNER, sender=OWNER)
    await chat.say("/cron rm g1", chat_id=OWNER, sender=OWNER)
    await chat.say("/cron rm g1", chat_id=OWNER, sender=OWNER)
    await chat.say("/cron rm cfg", chat_id=OWNER, sender=OWNER)
    await chat.say("/cron frobnicate", chat_id=OWNER, sender=OWNER)
    sent = await chat.wait_sent(6)
    assert sent[0] == "⚙️ /cron is owner-only."
    assert sent[1].splitlines() == [
        "⚙️ Cron jobs:",
        "cfg: every 1h — next 2026-11-23T09:00:00+00:00, last never",
        "g1: at 2026-12-01T09:00:00+01:00 — next 2026-12-01T08:00:00+00:00, last never",
    ]
    assert sent[2] == "⚙️ Removed cron job g1."
    assert sent[3] == "⚙️ cron job not found: g1."
    assert sent[4].startswith("⚙️ cron job cfg is defined in the config file")
    assert sent[5] == "⚙️ Usage: /cron list | /cron rm ID"
