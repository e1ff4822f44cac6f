"""D64: limits per person, agent and session, counted in the database, with an injected clock:
message rate, turns per day, cost per day (stopping a tool loop at the next model request), one
refusal per window, `/usage`, the metric; `perAgent` and `perSession`; one budget shared by two
runtimes on PostgreSQL (tests/e2e/test_limits_processes.py: two gateway processes)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient, TestServer

from core.api.testing import RecordingAdapter
from core.edge.http.server import build_app
from core.features.subagents.prompts import ANNOUNCE_USER_MESSAGE
from core.runtime import Runtime
from core.store import Store
from core.store.subagents import SubagentRecord
from tests.conftest import ConfigFactory, RuntimeFactory
from tests.fakes.model import FakeModelServer
from tests.fakes.model_script import text, tool_call
from tests.pg import fresh_pg_database
from tests.polling import eventually

T0 = int(dt.datetime(2026, 11, 29, 10, 15, 30, tzinfo=dt.UTC).timestamp() * 1000)
TG = {"botToken": "1:x", "owners": ["10"], "allowFrom": ["20", "*"], "streaming": "off"}


class Clock:
    def __init__(self) -> None:
        self.ms = T0

    def __call__(self) -> int:
        return self.ms


async def _start(
    make_runtime: RuntimeFactory, extra: dict[str, Any] | None = None
) -> tuple[Runtime, RecordingAdapter, Clock]:
    tg = RecordingAdapter("telegram")
    config = {"session": {"dmScope": "per-channel-peer"}, "channels": {"telegram": TG}}
    rt = await make_runtime({**config, **(extra or {})}, adapters=[tg])
    clock = Clock()
    rt.limits.clock = clock
    return rt, tg, clock


async def say(tg: RecordingAdapter, sender: str, words: str, *, expect: int = 1) -> list[str]:
    before = len(tg.sent)
    await tg.say(words, chat_id=sender, sender=sender)
    if expect:
        await tg.wait_for("", before + expect, timeout=15)
    return [t for _, t in tg.sent[before:]]


async def test_a_guest_gets_six_messages_a_minute_and_one_refusal(
    make_runtime: RuntimeFactory,
) -> None:
    rt, tg, clock = await _start(make_runtime)
    for i in range(6):
        assert await say(tg, "30", f"m{i}") == [f"echo: m{i}"]
    assert await say(tg, "30", "m6") == [
        "⏳ Limit reached: messages per minute (6/6). It resets at 10:16 UTC."
    ]
    assert await say(tg, "30", "m7", expect=0) == []  # once per window
    entry = await rt.store.get_session("agent:main:telegram:dm:30")
    assert entry is not None
    stored = [m for m in await rt.store.history(entry.session_id) if m.role == "user"]
    assert [m.plain_text() for m in stored][-2:] == ["m6", "m7"]  # kept, without a run
    assert (stored[-1].meta or {}).get("noRun") == "limit: messages per minute"
    clock.ms += 60_000
    assert await say(tg, "30", "again") == ["echo: again"]
    assert await say(tg, "10", "owner is unlimited") == ["echo: owner is unlimited"]
    metrics = rt.metrics.exposition().decode()
    assert "crosstalk_limit_refusals_total{" in metrics
    assert 'limit="messages per minute"' in metrics and 'scope="person"' in metrics


async def test_turns_per_day_and_usage_lines(make_runtime: RuntimeFactory) -> None:
    _, tg, clock = await _start(make_runtime, {"limits": {"member": {"turnsPerDay": 2}}})
    assert await say(tg, "20", "one") == ["echo: one"]
    assert await say(tg, "20", "/usage") == [
        "⚙️ Usage: 15 tokens this session\nAnswered by: fake/fake-model\nturns per day: 1/2"
    ]
    assert await say(tg, "20", "two") == ["echo: two"]
    assert await say(tg, "20", "three") == [
        "⏳ Limit reached: turns per day (2/2). It resets at 00:00 UTC."
    ]
    clock.ms += 14 * 3600_000  # the next UTC day
    assert await say(tg, "20", "four") == ["echo: four"]


async def test_cost_stops_a_tool_loop_at_the_next_model_request(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    prices = {"models": [{"id": "fake-model", "cost": {"input": 10_000, "output": 10_000}}]}
    rt, tg, _ = await _start(
        make_runtime,
        {
            "models": {"providers": {"fake": prices}},
            "limits": {"member": {"costUsdPerDay": 0.25, "costUsdPerMonth": 100}},
        },
    )  # 15 tokens a request at $10 000 per million: $0.15 each
    fake_model.script(
        tool_call("sessions_list", {}), tool_call("sessions_list", {}), text("never reached")
    )
    replies = await say(tg, "20", "loop")
    assert replies == ["⏳ Limit reached: cost per day ($0.30/$0.25). It resets at 00:00 UTC."]
    assert len(fake_model.requests) == 2  # the third request was never made
    run = await rt.store.last_run("agent:main:telegram:dm:20")
    assert run is not None and run.status == "limited"
    usage = await say(tg, "20", "/usage")
    assert usage[0].endswith("cost per day: $0.30/$0.25\ncost per month: $0.30/$100.00")
    assert await say(tg, "20", "more", expect=0) == []  # refused again, told once


async def test_the_month_refusal_names_its_date() -> None:
    from core.features.access.limits import Refusal, windows

    _, resets = windows(T0)["cost per month"]
    text_ = Refusal("person", "cost per month", 5.5, 5, resets).text()
    assert text_ == (
        "⏳ Limit reached: cost per month ($5.50/$5.00). It resets at 00:00 UTC on 2026-12-01."
    )


async def test_two_processes_share_one_budget_on_postgresql(
    make_config: ConfigFactory, tmp_path: Path
) -> None:
    config = make_config(
        {
            "session": {"dmScope": "per-channel-peer"},
            "channels": {"telegram": TG},
            "limits": {"guest": {"messagesPerMinute": 3}},
        }
    )
    async with fresh_pg_database() as url:
        runtimes, chats = [], []
        for i in range(2):
            rt = Runtime(config, store=Store(url, tmp_path / f"state-{i}"))
            tg = RecordingAdapter("telegram")
            await rt.start(adapters=[tg], probe_models=False)
            clock = Clock()
            rt.limits.clock = clock
            runtimes.append(rt)
            chats.append(tg)
        try:
            a, b = chats
            assert await say(a, "30", "1") == ["echo: 1"]
            assert await say(b, "30", "2") == ["echo: 2"]
            assert await say(a, "30", "3") == ["echo: 3"]
            assert await say(b, "30", "4") == [
                "⏳ Limit reached: messages per minute (3/3). It resets at 10:16 UTC."
            ]
        finally:
            for rt in runtimes:
                await rt.stop()


async def test_agent_and_session_limits_hold_for_everyone(make_runtime: RuntimeFactory) -> None:
    """`limits.perSession` counts each session, `limits.perAgent` all of an agent's sessions
    together (D64); people's own limits set to unlimited (`{}`) so only these two apply."""
    rt, tg, _ = await _start(
        make_runtime,
        {
            "limits": {
                "member": {},
                "guest": {},
                "perAgent": {"main": {"turnsPerDay": 3}},
                "perSession": {"messagesPerMinute": 2},
            }
        },
    )
    assert await say(tg, "20", "a") == ["echo: a"]
    assert await say(tg, "20", "b") == ["echo: b"]
    assert await say(tg, "20", "c") == [
        "⏳ Limit reached: messages per minute (2/2). It resets at 10:16 UTC."
    ]  # the session's limit; not counted against the agent
    assert await say(tg, "30", "d") == ["echo: d"]
    assert await say(tg, "30", "e") == [
        "⏳ Limit reached: turns per day (3/3). It resets at 00:00 UTC."
    ]  # the agent's, reached by two people together
    assert await say(tg, "10", "owner too", expect=1) == [
        "⏳ Limit reached: turns per day (3/3). It resets at 00:00 UTC."
    ]
    assert await say(tg, "30", "/usage") == [
        "⚙️ Usage: 15 tokens this session\nAnswered by: fake/fake-model\n"
        "turns per day: 3/3\nmessages per minute: 1/2"
    ]
    metrics = rt.metrics.exposition().decode()
    assert 'scope="session"' in metrics and 'scope="agent"' in metrics


async def test_api_turns_count_against_agent_and_session_limits(
    make_runtime: RuntimeFactory,
) -> None:
    """D102: `/v1/chat/completions` and a webhook ask for turns with no person behind them; the
    agent's and session's limits count them like chat messages, and over one the answer is a
    429 with the refusal text (nothing stored, no run)."""
    hook = {"id": "ci", "path": "ci", "token": "hook-secret", "messageTemplate": "CI {{ body.s }}"}
    rt, tg, _ = await _start(
        make_runtime,
        {
            "limits": {"perAgent": {"main": {"turnsPerDay": 3}}},
            "hooks": {"mappings": [hook]},
        },
    )
    async with TestClient(TestServer(build_app(rt, "test-token", [tg]))) as c:

        async def complete(words: str) -> tuple[int, Any]:
            resp = await c.post(
                "/v1/chat/completions",
                json={"model": "crosstalk", "messages": [{"role": "user", "content": words}]},
                headers={"Authorization": "Bearer test-token", "x-crosstalk-session-key": "api"},
            )
            return resp.status, await resp.json()

        assert (await complete("one"))[0] == 200
        resp = await c.post(
            "/hooks/ci?wait=true",
            json={"s": "green"},
            headers={"x-crosstalk-hook-token": "hook-secret"},
        )
        assert resp.status == 200 and (await resp.json())["status"] == "ok"
        assert await say(tg, "20", "three") == ["echo: three"]  # a chat message: the third turn
        refusal = "⏳ Limit reached: turns per day (3/3). It resets at 00:00 UTC."
        status, body = await complete("four")
        assert (status, body["error"]["message"]) == (429, refusal)
        resp = await c.post(
            "/hooks/ci", json={"s": "red"}, headers={"x-crosstalk-hook-token": "hook-secret"}
        )
        assert resp.status == 429 and (await resp.json())["error"]["message"] == refusal
    entry = await rt.store.get_session("agent:main:api")
    assert entry is not None
    said = [m.plain_text() for m in await rt.store.history(entry.session_id) if m.role == "user"]
    assert said == ["one"]  # "four" was not stored
    assert 'scope="agent"' in rt.metrics.exposition().decode()


async def test_a_sub_agent_spends_its_requesters_budget(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    """A member's sub-agent carries the member's sender (D60), so its model requests are
    checked and counted against the member's cost limit: it cannot spend past it (D64).

    The member's first request ($0.15) reaches the $0.10 limit, so the order of what follows
    is free: the parent's tool loop stops at its next request, and the child, started by that
    first request's tool call, is refused before it asks the model (with the owner's budget it
    would have asked), and so is its announce step, which runs as the requester too (D149; it
    ran without the member's sender before, on the agent's budget). A limit one request could
    not reach would race the child's check against the parent's second request, whose price is
    counted only once it is answered."""
    prices = {"models": [{"id": "fake-model", "cost": {"input": 10_000, "output": 10_000}}]}
    rt, tg, _ = await _start(
        make_runtime,
        {"models": {"providers": {"fake": prices}}, "limits": {"member": {"costUsdPerDay": 0.1}}},
    )
    fake_model.script(tool_call("sessions_spawn", {"task": "work"}), text("spawned"), text("no"))
    [refusal] = await say(tg, "20", "spawn one")
    assert refusal.startswith("⏳ Limit reached: cost per day")
    [rec] = await rt.store.list_subagent_runs(requester_key="agent:main:telegram:dm:20")
    assert (rec.sender, rec.role) == ("telegram:20", "member")

    async def announced() -> SubagentRecord | None:
        got = await rt.store.get_subagent_run(rec.run_id)
        return got if got is not None and got.announced_at is not None else None

    done = await eventually(announced, 20, "the child's announce to end")
    run = await rt.store.get_run(rec.run_id)
    assert run is not None and run.status == "limited"
    child = await rt.store.get_session(rec.child_key)
    assert child is not None
    asked = [m for m in await rt.store.history(child.session_id) if m.role == "user"]
    assert [m.plain_text() for m in asked] == ["work", ANNOUNCE_USER_MESSAGE]
    step = await rt.store.get_run(asked[1].run_id or "")
    assert step is not None and step.status == "limited"  # refused as the member
    assert done.announced_at is not None
    assert len(fake_model.requests) == 1  # neither the parent's loop nor the child asked again
