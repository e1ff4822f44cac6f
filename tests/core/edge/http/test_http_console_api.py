"""The API routes the console added (D181–D182), over real HTTP with the bearer token, on
SQLite and PostgreSQL: the filtered session list, reset, the send policy with its source, the
delivery log by channel and time, usage, the overview, config and hooks with secrets masked;
each with its 4xx for bad input."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from core.edge.http.server import build_app
from core.runtime import Runtime
from core.store import DeliveryRecord, RunRecord, now_ms
from tests.conftest import Client, ConfigFactory
from tests.pg import fresh_pg_database

AUTH = {"Authorization": "Bearer test-token"}
CONFIG = {
    "agents": {"list": [{"id": "main", "default": True}, {"id": "ops"}]},
    "session": {"sendPolicy": {"rules": [{"action": "deny", "match": {"channel": "discord"}}]}},
    "hooks": {"mappings": [{"id": "github", "path": "gh/push", "token": "hook-secret"}]},
    "channels": {"telegram": {"botToken": "123:telegram-secret", "enabled": False}},
}


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
async def api(
    request: pytest.FixtureRequest, make_config: ConfigFactory
) -> AsyncIterator[tuple[Client, Runtime]]:
    async def start(extra: dict[str, Any]) -> AsyncIterator[tuple[Client, Runtime]]:
        rt = Runtime(make_config({**CONFIG, **extra}))
        await rt.start(probe_models=False)
        try:
            async with TestClient(TestServer(build_app(rt, "test-token", []))) as c:
                yield c, rt
        finally:
            await rt.stop()

    if request.param == "sqlite":
        async for pair in start({}):
            yield pair
    else:
        async with fresh_pg_database() as url:
            async for pair in start({"gateway": {"database": {"url": url}}}):
                yield pair


async def get(c: Client, path: str, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    resp = await c.get(path, headers=AUTH if headers is None else headers)
    return resp.status, await resp.json()


async def seed_sessions(rt: Runtime) -> None:
    await rt.services.ensure_session(
        rt.keys.main_session_key(), channel="telegram", display_name="Alice"
    )
    await rt.services.ensure_session(
        "agent:main:discord:group:42", channel="discord", chat_type="group", label="team room"
    )
    await rt.services.ensure_session("agent:ops:cron:nightly")


async def test_sessions_filter_before_the_limit_and_say_their_policy(
    api: tuple[Client, Runtime],
) -> None:
    c, rt = api
    await seed_sessions(rt)

    async def keys(query: str) -> list[str]:
        status, body = await get(c, f"/api/sessions{query}")
        assert status == 200, body
        assert body["count"] == len(body["sessions"])
        return sorted(r["sessionKey"] for r in body["sessions"])

    assert await keys("") == [
        "agent:main:discord:group:42",
        "agent:main:main",
        "agent:ops:cron:nightly",
    ]
    assert await keys("?kind=group") == ["agent:main:discord:group:42"]
    assert await keys("?kind=main,%20cron") == ["agent:main:main", "agent:ops:cron:nightly"]
    assert await keys("?channel=telegram") == ["agent:main:main"]
    assert await keys("?agent=ops") == ["agent:ops:cron:nightly"]
    assert await keys("?q=TEAM%20ROOM") == ["agent:main:discord:group:42"]  # label, any case
    assert await keys("?q=alice") == ["agent:main:main"]  # display name
    assert await keys("?limit=1&kind=group,cron&agent=main") == ["agent:main:discord:group:42"]
    _, body = await get(c, "/api/sessions?channel=discord")
    [row] = body["sessions"]
    assert row["agentId"] == "main" and row["kind"] == "group"
    assert row["effectiveSendPolicy"] == {
        "action": "deny",
        "state": "off",
        "source": "rule",
        "reason": "rule 1: channel=discord",
        "text": "Send policy: off (rule 1: channel=discord)",
    }

    for query, message in [
        (
            "?kind=dm",
            "invalid kind: 'dm' (comma-separated of: main, group, cron, hook, node, other)",
        ),
        ("?channel=Telegram", "invalid channel: 'Telegram' (comma-separated lowercase names)"),
        ("?agent=a,,b", "invalid agent: 'a,,b' (comma-separated lowercase names)"),
        ("?limit=0", "limit must be an integer from 1 to 500"),
        ("?limit=501", "limit must be an integer from 1 to 500"),
        ("?limit=ten", "limit must be an integer from 1 to 500"),
        ("?q=" + "x" * 201, "q is too long (max 200 characters)"),
    ]:
        status, body = await get(c, f"/api/sessions{query}")
        assert (status, body) == (
            400,
            {"error": {"message": message, "type": "invalid_request_error"}},
        ), query
    assert (await get(c, "/api/sessions", headers={}))[0] == 401


async def test_send_policy_source_follows_the_override(api: tuple[Client, Runtime]) -> None:
    c, rt = api
    await seed_sessions(rt)
    _, body = await get(c, "/api/sessions/main")
    assert body["entry"]["effectiveSendPolicy"]["text"] == "Send policy: on (default)"
    assert body["entry"]["agentId"] == "main"
    for value, state, source in (
        ("deny", "off", "session"),
        ("allow", "on", "session"),
        (None, "on", "implicit"),
    ):
        resp = await c.patch("/api/sessions/main", json={"sendPolicy": value}, headers=AUTH)
        policy = (await resp.json())["entry"]["effectiveSendPolicy"]
        assert (policy["state"], policy["source"]) == (state, source)
    resp = await c.patch(
        "/api/sessions/agent%3Amain%3Adiscord%3Agroup%3A42",
        json={"sendPolicy": "allow"},
        headers=AUTH,
    )
    policy = (await resp.json())["entry"]["effectiveSendPolicy"]
    assert policy["text"] == "Send policy: on (session override)"  # the override beats the rule


async def test_reset_starts_a_new_transcript_and_keeps_the_policy(
    api: tuple[Client, Runtime],
) -> None:
    c, rt = api
    await seed_sessions(rt)
    key = rt.keys.main_session_key()
    before = await rt.store.update_session(key, send_policy="deny", cost_usd=0.5, total_tokens=100)
    resp = await c.post("/api/sessions/main/reset", headers=AUTH)
    body = await resp.json()
    assert resp.status == 200 and body["key"] == key
    after = await rt.store.get_session(key)
    assert after is not None and after.session_id != before.session_id
    assert (after.send_policy, after.cost_usd, after.total_tokens) == ("deny", None, None)
    assert body["entry"]["sessionId"] == after.session_id
    assert body["entry"]["effectiveSendPolicy"]["state"] == "off"

    resp = await c.post("/api/sessions/agent%3Amain%3Anobody/reset", headers=AUTH)
    assert resp.status == 404
    assert await resp.json() == {
        "error": {"message": "Unknown session: agent:main:nobody", "type": "not_found"}
    }
    assert (await c.post("/api/sessions/main/reset")).status == 401
    assert (await c.post("/api/sessions/%20/reset", headers=AUTH)).status == 400
    resp = await c.get("/api/sessions/main/reset", headers=AUTH)
    assert resp.status == 405 and resp.headers["Allow"] == "POST"


async def test_deliveries_by_channel_and_time(api: tuple[Client, Runtime]) -> None:
    c, rt = api
    now = now_ms()
    for channel, created in (("telegram", now - 90_000_000), ("telegram", now), ("discord", now)):
        await rt.store.record_delivery(
            DeliveryRecord(
                kind="reply",
                outcome="failed",
                text="x",
                created_at=created,
                channel=channel,
                to="1",
                reason="TargetNotFound: chat not found",
            )
        )
    _, body = await get(c, "/api/deliveries?channel=telegram")
    assert [d["channel"] for d in body["deliveries"]] == ["telegram", "telegram"]
    _, body = await get(c, f"/api/deliveries?channel=telegram&since={now - 86_400_000}")
    assert [d["createdAt"] for d in body["deliveries"]] == [now]
    for query in (
        "channel=Telegram",
        "channel=tele%20gram",
        "since=",
        "since=-1",
        "since=yesterday",
    ):
        status, err = await get(c, f"/api/deliveries?{query}")
        assert status == 400, query
        assert err["error"]["type"] == "invalid_request_error"
    _, overview = await get(c, "/api/overview")
    assert overview["failedDeliveries24h"] == 2  # the older one is outside the 24 hours
    assert overview["failedSince"] <= now_ms() - 86_400_000 + 5_000


async def test_usage_by_day_agent_channel_session_and_model(
    api: tuple[Client, Runtime],
) -> None:
    c, rt = api
    await seed_sessions(rt)
    now = now_ms()
    runs: list[tuple[str, int, dict[str, Any], int, int]] = [
        ("agent:main:main", now, {"model": "fake/fake-model", "costUsd": 0.25}, 10, 5),
        ("agent:main:main", now - 86_400_000, {"model": "fake/fake-model", "costUsd": 0.5}, 20, 10),
        ("agent:ops:cron:nightly", now, {"model": "fake/other"}, 1, 1),
        ("agent:main:main", now - 40 * 86_400_000, {"costUsd": 9.0}, 1, 1),
    ]
    for i, (key, created, meta, tin, tout) in enumerate(runs):
        await rt.store.create_run(
            RunRecord(
                id=f"run-{i}",
                session_key=key,
                status="running",
                lane="main",
                deliver=True,
                created_at=created,
            )
        )
        await rt.store.update_run(
            f"run-{i}", status="ok", input_tokens=tin, output_tokens=tout, meta=meta
        )  # as a finished turn has them
    status, u = await get(c, "/api/usage?days=7")
    assert status == 200
    assert u["totals"] == {
        "key": "total",
        "turns": 3,
        "pricedTurns": 2,
        "costUsd": 0.75,
        "inputTokens": 31,
        "outputTokens": 16,
    }
    assert len(u["byDay"]) == 7 and sum(d["turns"] for d in u["byDay"]) == 3
    assert [d["turns"] for d in u["byDay"][-2:]] == [1, 2]
    assert [(g["key"], g["turns"], g["costUsd"]) for g in u["byAgent"]] == [
        ("main", 2, 0.75),
        ("ops", 1, 0.0),
    ]
    assert [(g["key"], g["turns"]) for g in u["byChannel"]] == [("telegram", 2), ("internal", 1)]
    assert [g["key"] for g in u["byModel"]] == ["fake/fake-model", "fake/other"]
    assert [g["key"] for g in u["bySession"]] == ["agent:main:main", "agent:ops:cron:nightly"]
    _, month = await get(c, "/api/usage?days=60")
    assert month["totals"]["turns"] == 4 and month["byModel"][0]["key"] == "none"
    for days in ("0", "367", "-1", "x", ""):
        status, err = await get(c, f"/api/usage?days={days}")
        assert (status, err["error"]["message"]) == (
            400,
            "days must be an integer from 1 to 366",
        ), days


async def test_overview_config_and_hooks_never_show_a_secret(
    api: tuple[Client, Runtime],
) -> None:
    c, rt = api
    await seed_sessions(rt)
    await rt.store.create_run(
        RunRecord(
            id="waiting",
            session_key="agent:main:main",
            status="queued",
            lane="main",
            deliver=True,
            created_at=now_ms(),
        )
    )
    status, o = await get(c, "/api/overview")
    assert status == 200
    assert o["queue"] == {"queued": 1, "running": 0}
    assert [p["self"] for p in o["processes"]] == [True]
    assert o["agents"] == ["main", "ops"] and o["model"] == "fake/fake-model"
    _, health = await get(c, "/healthz")
    assert o["channels"] == health["channels"]

    status, body = await get(c, "/api/config")
    text = json.dumps(body)
    assert status == 200 and "hook-secret" not in text and "telegram-secret" not in text
    assert "test-token" not in text
    assert body["config"]["channels"]["telegram"]["botToken"] == "***"
    assert body["config"]["gateway"]["auth"]["token"] == "***"
    status, hooks = await get(c, "/api/hooks")
    assert status == 200
    assert hooks["hooks"] == [{**body["config"]["hooks"]["mappings"][0], "url": "/hooks/gh/push"}]
    assert hooks["hooks"][0]["token"] == "***"
    for path in ("/api/overview", "/api/config", "/api/hooks", "/api/usage"):
        assert (await get(c, path, headers={}))[0] == 401, path
