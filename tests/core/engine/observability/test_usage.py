"""Usage (D182) on SQLite and PostgreSQL: turns aggregated in SQL by UTC day (no gaps), agent,
channel, model and session; priced and unpriced turns; sessions that no longer exist."""

from __future__ import annotations

import datetime as dt
from typing import Any

from core.engine.observability.usage import range_start, usage_report
from core.store import RunRecord, Store

NOON = int(dt.datetime(2026, 11, 23, 12, tzinfo=dt.UTC).timestamp() * 1000)
DAY = 86_400_000


async def turn(store: Store, run_id: str, key: str, at: int, meta: dict[str, Any] | None) -> None:
    await store.create_run(
        RunRecord(
            id=run_id, session_key=key, status="running", lane="main", deliver=True, created_at=at
        )
    )
    await store.update_run(run_id, status="ok", input_tokens=3, output_tokens=2, meta=meta)


async def test_days_are_whole_utc_days_ending_today(store: Store) -> None:
    since = range_start(NOON, 3)
    assert since == int(dt.datetime(2026, 11, 21, tzinfo=dt.UTC).timestamp() * 1000)
    report = usage_report(await store.usage_cells(since, NOON + 1), since, NOON + 1)
    assert [d["key"] for d in report["byDay"]] == ["2026-11-21", "2026-11-22", "2026-11-23"]
    assert all(d["turns"] == 0 for d in report["byDay"])
    assert report["totals"] == {
        "key": "total",
        "turns": 0,
        "pricedTurns": 0,
        "costUsd": 0.0,
        "inputTokens": 0,
        "outputTokens": 0,
    }
    assert report["bySession"] == [] and report["sessionsTotal"] == 0


async def test_groups_and_prices(store: Store) -> None:
    await store.ensure_session("agent:main:main", agent_id="main", kind="main", channel="telegram")
    await store.ensure_session("agent:main:cron:c", agent_id="main", kind="cron")
    await store.ensure_session("agent:main:openai:1", agent_id="main", kind="other")
    await turn(store, "a", "agent:main:main", NOON, {"model": "a/x", "costUsd": 0.1})
    await turn(store, "b", "agent:main:main", NOON - DAY, {"model": "a/x", "costUsd": 0.2})
    await turn(store, "c", "agent:main:cron:c", NOON, {"model": "b/y"})
    await turn(store, "d", "agent:main:openai:1", NOON, None)
    await turn(store, "e", "agent:ops:subagent:gone", NOON, {"model": "b/y", "costUsd": 1})
    await turn(store, "old", "agent:main:main", NOON - 5 * DAY, {"costUsd": 9.0})
    since = range_start(NOON, 2)
    report = usage_report(await store.usage_cells(since, NOON + 1), since, NOON + 1)
    assert report["totals"] == {
        "key": "total",
        "turns": 5,
        "pricedTurns": 3,
        "costUsd": 1.3,
        "inputTokens": 15,
        "outputTokens": 10,
    }
    assert [(d["key"], d["turns"]) for d in report["byDay"]] == [
        ("2026-11-22", 1),
        ("2026-11-23", 4),
    ]
    assert [(g["key"], g["turns"], g["costUsd"]) for g in report["byAgent"]] == [
        ("ops", 1, 1.0),
        ("main", 4, 0.3),
    ]  # "ops": from the key of a session now gone
    assert [(g["key"], g["turns"]) for g in report["byChannel"]] == [
        ("unknown", 2),
        ("telegram", 2),
        ("internal", 1),
    ]
    assert [(g["key"], g["pricedTurns"]) for g in report["byModel"]] == [
        ("b/y", 1),
        ("a/x", 2),
        ("none", 0),
    ]
    assert report["bySession"][1] == {
        "key": "agent:main:main",
        "turns": 2,
        "pricedTurns": 2,
        "costUsd": 0.3,
        "inputTokens": 6,
        "outputTokens": 4,
    }
    assert report["sessionsTotal"] == 4
