"""`sessions_list` at 100, 10,000 and 100,000 sessions, SQLite and PostgreSQL: the latency
should stay flat (indexed, limit applied in SQL; D2), whatever the number of sessions.

Fixtures are bulk-inserted (one multi-row statement per 5,000 sessions), so 100,000 sessions
take seconds to build. Prints p50/p95 per size and the p50 ratio of the largest to the smallest.

    .venv/bin/python -m bench.bench_sessions_list_scale [--sessions 100,10000,100000] [--pg]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from bench.bench_sessions_list import seed
from bench.common import summary, temp_config
from core.runtime import Runtime

CASES: tuple[tuple[str, dict[str, Any]], ...] = (
    ("default (limit 50)", {}),
    ("kinds=[cron] limit 20", {"kinds": ["cron"], "limit": 20}),
    ("messageLimit=3", {"messageLimit": 3}),
)


async def measure(count: int, db_url: str | None, iterations: int) -> dict[str, float]:
    """p50 (ms) of each case with `count` sessions in a fresh store."""
    rt = Runtime(temp_config(db_url=db_url))
    await rt.start(probe_models=False)
    if rt.warmup is not None:
        await rt.warmup
    p50: dict[str, float] = {}
    try:
        t0 = time.perf_counter()
        await seed(rt, count)
        built = time.perf_counter() - t0
        entry = await rt.services.ensure_session("agent:main:main")
        ctx = rt.services.context_for(entry)
        print(f"{rt.store.dialect} sessions={count:>7}: fixture built in {built:.1f} s")
        for label, args in CASES:
            for _ in range(10):
                await rt.tools.invoke(rt.tool_env, "sessions_list", args, ctx)
            samples = []
            for _ in range(iterations):
                t1 = time.perf_counter()
                out = await rt.tools.invoke(rt.tool_env, "sessions_list", args, ctx)
                samples.append((time.perf_counter() - t1) * 1000)
            p50[label] = statistics.median(samples)
            print("  " + summary(f"{label:<22} rows={out['count']:>3}", samples))
    finally:
        await rt.stop()
    return p50


@asynccontextmanager
async def database(pg: bool) -> AsyncIterator[str | None]:
    """None (a fresh SQLite file) or a fresh, empty database on the local PostgreSQL server."""
    if not pg:
        yield None
        return
    from tests.pg import fresh_pg_database

    async with fresh_pg_database() as url:
        yield url


async def run(counts: list[int], pg: bool, iterations: int) -> None:
    by_count = []
    for n in counts:
        async with database(pg) as url:
            by_count.append(await measure(n, url, iterations))
    where = "postgresql" if pg else "sqlite"
    for label, _ in CASES:
        first, last = by_count[0][label], by_count[-1][label]
        print(
            f"{where}: {label:<22} p50 at {counts[-1]:,} / at {counts[0]:,} sessions = "
            f"{last / first:.2f}x ({first:.2f} → {last:.2f} ms)"
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", default="100,10000,100000")
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument(
        "--pg",
        action="store_true",
        help="also measure on a fresh database of the local PostgreSQL server",
    )
    args = ap.parse_args()
    counts = [int(x) for x in args.sessions.split(",")]
    asyncio.run(run(counts, False, args.iterations))
    if args.pg:
        asyncio.run(run(counts, True, args.iterations))


if __name__ == "__main__":
    main()
