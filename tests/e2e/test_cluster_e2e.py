"""Issue 16 / D27: two real `crosstalk gateway` processes on one PostgreSQL database behave as one
gateway: one session's turns run once each and in order whichever process took them, many
sessions run at once, a kill -9 mid-run is taken over (aborted + restart notice + the dead
process's queued turns answered), and a web chat on one process sees turns run on the other."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from core.engine.outbound.restart_notice import restart_notice
from tests.e2e.gateway_chat import Chat, Held
from tests.fakes.model import FakeModelServer, last_user_text
from tests.gateway_process import GatewayProcess
from tests.pg import fresh_pg_database
from tests.polling import eventually

pytestmark = [pytest.mark.postgres, pytest.mark.timeout(240)]
SESSION = "x-crosstalk-session-key"


def cluster_config(
    path: Path, state: Path, fake: FakeModelServer, url: str, lease: float = 2.0
) -> Path:
    path.write_text(
        "gateway:\n"
        f"  stateDir: {state}\n"
        "  auth:\n    token: e2e-token\n"
        f"  database:\n    url: {url}\n"
        "models:\n  providers:\n    fake:\n"
        f"      baseUrl: {fake.base_url}\n      apiKey: test\n"
        "agents:\n  defaults:\n    model: fake/fake-model\n"
        f"cluster:\n  leaseSeconds: {lease}\n",
        encoding="utf-8",
    )
    return path


@asynccontextmanager
async def two_gateways(
    tmp_path: Path, fake: FakeModelServer, lease: float = 2.0
) -> AsyncIterator[tuple[str, list[GatewayProcess]]]:
    async with fresh_pg_database() as url, AsyncExitStack() as stack:
        gws = []
        for name in ("a", "b"):
            cfg = cluster_config(tmp_path / f"{name}.yaml", tmp_path / name, fake, url, lease)
            gws.append(await stack.enter_async_context(GatewayProcess(cfg)))

        async def both_listed() -> bool:
            _, body = await gws[0].request("GET", "/api/cluster")
            return len(body.get("processes", [])) == 2

        await eventually(both_listed, timeout=20, what="both processes in /api/cluster")
        yield url.replace("postgresql+asyncpg://", "postgresql://"), gws


async def sql(dsn: str, query: str, *args: Any) -> list[Any]:
    import asyncpg

    conn = await asyncpg.connect(dsn)
    try:
        return list(await conn.fetch(query, *args))
    finally:
        await conn.close()


async def complete(gw: GatewayProcess, session: str, message: str) -> tuple[int, Any]:
    return await gw.request(
        "POST",
        "/v1/chat/completions",
        {"model": "fake/fake-model", "messages": [{"role": "user", "content": message}]},
        headers={SESSION: session},
    )


def reply_of(body: Any) -> str:
    return str(body["choices"][0]["message"]["content"])


async def test_one_session_split_across_two_processes_runs_once_each_in_order(
    tmp_path: Path, fake_model: FakeModelServer
) -> None:
    held = Held("m00")
    fake_model.set_responder(held)
    async with two_gateways(tmp_path, fake_model, lease=10.0) as (dsn, gws):
        key = "agent:main:fifo"
        calls = [asyncio.ensure_future(complete(gws[0], key, "m00"))]
        await asyncio.wait_for(held.reached.wait(), 30)
        for i in range(1, 100):  # each accepted (stored) before the next is sent: arrival order
            calls.append(asyncio.ensure_future(complete(gws[i % 2], key, f"m{i:02d}")))

            async def stored(n: int = i + 1) -> bool:
                rows = await sql(dsn, "SELECT count(*) FROM runs WHERE session_key = $1", key)
                return int(rows[0][0]) == n

            await eventually(stored, timeout=20, what=f"run of m{i:02d} stored")
        held.release.set()
        results = await asyncio.wait_for(asyncio.gather(*calls), 180)
        assert [(s, reply_of(b)) for s, b in results] == [
            (200, f"echo: m{i:02d}") for i in range(100)
        ]
        rows = await sql(
            dsn,
            "SELECT m.role, m.content FROM messages m JOIN sessions s "
            "ON s.session_id = m.session_id WHERE s.key = $1 "
            "ORDER BY m.seq, m.id",
            key,
        )
        # compaction's summaries (D71) sit between the turns; every message is still there in order
        texts = [
            "".join(p.get("text", "") for p in json.loads(r[1])) for r in rows if r[0] != "summary"
        ]
        assert texts == [t for i in range(100) for t in (f"m{i:02d}", f"echo: m{i:02d}")]
        owners = await sql(
            dsn,
            "SELECT owner, count(*) FROM runs WHERE session_key = $1 "
            "AND status = 'ok' GROUP BY owner",
            key,
        )
        assert sorted(int(r[1]) for r in owners) == [50, 50]


async def test_two_hundred_sessions_at_once_across_both(
    tmp_path: Path, fake_model: FakeModelServer
) -> None:
    async with two_gateways(tmp_path, fake_model, lease=10.0) as (dsn, gws):
        results = await asyncio.wait_for(
            asyncio.gather(
                *(complete(gws[i % 2], f"agent:main:s{i:03d}", f"hello {i}") for i in range(200))
            ),
            180,
        )
        assert [(s, reply_of(b)) for s, b in results] == [
            (200, f"echo: hello {i}") for i in range(200)
        ]
        rows = await sql(dsn, "SELECT status, count(*) FROM runs GROUP BY status")
        assert {r[0]: int(r[1]) for r in rows} == {"ok": 200}


async def test_kill_minus_nine_mid_run_is_taken_over(
    tmp_path: Path, fake_model: FakeModelServer
) -> None:
    held = Held("cut short")
    fake_model.set_responder(held)
    async with two_gateways(tmp_path, fake_model) as (dsn, (a, b)):
        async with Chat(a) as on_a:
            await on_a.send("cut short")
            await asyncio.wait_for(held.reached.wait(), 30)
            await on_a.send("queued one")
            await on_a.send("queued two")

            async def queued() -> bool:
                rows = await sql(dsn, "SELECT count(*) FROM runs WHERE status = 'queued'")
                return int(rows[0][0]) == 2

            await eventually(queued, timeout=20, what="two turns queued on A")
        async with Chat(b) as on_b:
            loop = asyncio.get_running_loop()
            killed_at = loop.time()
            await a.kill()
            await on_b.wait_for(lambda f: f.get("text") == restart_notice("cut short"), timeout=10)
            assert loop.time() - killed_at < 2.0 + 2.0  # within the lease time (+ one beat)
            await on_b.wait_for(
                lambda f: f.get("type") == "message" and f.get("text") == "echo: queued two",
                timeout=30,
            )
            assert [t for t in on_b.texts() if t.startswith("echo:")] == [
                "echo: queued one",
                "echo: queued two",
            ]
        rows = await sql(dsn, "SELECT status, count(*) FROM runs GROUP BY status")
        assert {r[0]: int(r[1]) for r in rows} == {"aborted": 1, "ok": 2}
        _, body = await b.request("GET", "/api/cluster")
        assert [p["pid"] for p in body["processes"]] == [b.proc.pid if b.proc else 0]


async def test_web_chat_on_one_process_sees_a_turn_run_on_the_other(
    tmp_path: Path, fake_model: FakeModelServer
) -> None:
    async with two_gateways(tmp_path, fake_model) as (_dsn, (a, b)):
        async with Chat(a) as on_a, Chat(b) as on_b:
            await on_b.send("hello from b")
            await on_a.wait_for(
                lambda f: f.get("type") == "message" and f.get("text") == "echo: hello from b"
            )
            await on_b.wait_for(
                lambda f: f.get("type") == "message" and f.get("text") == "echo: hello from b"
            )
        _, health = await a.request("GET", "/healthz")
        _, cluster = await a.request("GET", "/api/cluster")
        assert health["process"]["id"] in [p["id"] for p in cluster["processes"]]


async def test_one_announce_per_sub_agent_while_another_process_starts(
    tmp_path: Path, fake_model: FakeModelServer
) -> None:
    """Every announce is claimed (and held) on A or B when C starts: C must not take them."""
    step = "Sub-agent announce step."
    held = Held(step)
    fake_model.set_responder(held)
    async with two_gateways(tmp_path, fake_model, lease=10.0) as (dsn, (a, b)):
        for i, gw in enumerate((a, b, a, b)):
            await gw.invoke("sessions_spawn", {"task": f"job {i}"})

        async def steps(n: int = 4) -> bool:
            return sum(last_user_text(r) == step for r in fake_model.requests) >= n

        await eventually(steps, timeout=60, what="four announce steps held")
        config = cluster_config(tmp_path / "c.yaml", tmp_path / "c", fake_model, dsn, 10.0)
        async with GatewayProcess(config):
            held.release.set()

            async def settled() -> bool:
                rows = await sql(dsn, "SELECT announce_state FROM subagent_runs")
                busy = await sql(
                    dsn, "SELECT count(*) FROM runs WHERE status IN ('queued', 'running')"
                )
                return (
                    len(rows) == 4
                    and all(r[0] in ("done", "skipped") for r in rows)
                    and int(busy[0][0]) == 0
                )

            await eventually(settled, timeout=60, what="four announces settled")
        rows = await sql(
            dsn, "SELECT count(*) FROM messages WHERE (meta::jsonb)->>'kind' = 'subagent_announce'"
        )
        assert int(rows[0][0]) == 4
        assert sum(last_user_text(r) == step for r in fake_model.requests) == 4
        # C's start aborted none of the turns A and B were running (D27)
        assert await sql(dsn, "SELECT id FROM runs WHERE status <> 'ok'") == []


async def test_a_clean_stop_hands_its_queued_turns_over(
    tmp_path: Path, fake_model: FakeModelServer
) -> None:
    held = Held("in progress")
    fake_model.set_responder(held)
    async with two_gateways(tmp_path, fake_model, lease=10.0) as (dsn, (a, b)):
        async with Chat(a) as on_a:
            await on_a.send("in progress")
            await asyncio.wait_for(held.reached.wait(), 30)
            await on_a.send("waiting one")
            await on_a.send("waiting two")

            async def queued() -> bool:
                rows = await sql(dsn, "SELECT count(*) FROM runs WHERE status = 'queued'")
                return int(rows[0][0]) == 2

            await eventually(queued, timeout=20, what="two turns queued on A")
        async with Chat(b) as on_b:
            await a.__aexit__(None, None, None)  # SIGTERM: a rolling restart, say
            # well within the 10 s lease: the stopped process marked itself gone
            await on_b.wait_for(
                lambda f: f.get("type") == "message" and f.get("text") == "echo: waiting two",
                timeout=8,
            )
            assert [t for t in on_b.texts() if t.startswith("echo:")] == [
                "echo: waiting one",
                "echo: waiting two",
            ]
        rows = await sql(
            dsn,
            "SELECT status, owner = $1 FROM runs ORDER BY created_at",
            (await b.request("GET", "/healthz"))[1]["process"]["id"],
        )
        assert [(r[0], r[1]) for r in rows] == [("aborted", False), ("ok", True), ("ok", True)]
