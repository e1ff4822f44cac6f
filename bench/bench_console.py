"""What the owner console costs the database (D181–D183), SQLite and PostgreSQL.

The live feed's watermark read (once a second per process while a console is open), the
overview's counts, a filtered and a searched session list, and a 30-day usage report, on a store
with many sessions, deliveries and turns. Prints p50/p95 per operation and the load average.

    .venv/bin/python -m bench.bench_console [--sessions 10000] [--rows 100000] [--active 200] [--pg]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy import Connection, insert, text

from bench.bench_sessions_list import seed
from bench.bench_sessions_list_scale import database
from bench.common import summary, temp_config
from core.engine.observability.usage import range_start, usage_report
from core.runtime import Runtime
from core.store import SessionQuery, now_ms
from core.store.console import D, R

DAY = 86_400_000


async def seed_rows(rt: Runtime, active: int, rows: int) -> None:
    """`rows` deliveries and `rows` finished turns over the last 60 days, in `active` sessions
    (a turn per session and day is the worst case for the usage report: one cell per turn)."""
    now = now_ms()
    deliveries, runs = [], []
    for i in range(rows):
        key = f"agent:main:telegram:group:g{(i * 3) % active}"
        at = now - (i * 60 * DAY) // rows
        deliveries.append(
            {
                "session_key": key,
                "kind": "reply",
                "text": "x",
                "to": "1",
                "outcome": "failed" if i % 50 == 0 else "delivered",
                "channel": "telegram",
                "account_id": "default",
                "attempts": 1,
                "created_at": at,
                "reason": "allowed: no policy configured",
            }
        )
        runs.append(
            {
                "id": f"run-{i}",
                "session_key": key,
                "status": "ok",
                "lane": "main",
                "deliver": True,
                "created_at": at,
                "input_tokens": 100,
                "output_tokens": 20,
                "meta": {"model": f"fake/m{i % 3}", "costUsd": 0.001},
            }
        )

    def op(conn: Connection) -> None:
        for start in range(0, rows, 5000):
            conn.execute(insert(D), deliveries[start : start + 5000])
            conn.execute(insert(R), runs[start : start + 5000])

    await rt.store.write(op)
    await rt.store.write(lambda c: c.execute(text("ANALYZE")))


async def timed(label: str, op: Callable[[], Awaitable[Any]], iterations: int) -> None:
    for _ in range(3):
        await op()
    samples = []
    for _ in range(iterations):
        t0 = time.perf_counter()
        await op()
        samples.append((time.perf_counter() - t0) * 1000)
    print("  " + summary(f"{label:<34}", samples))


async def run(sessions: int, active: int, rows: int, pg: bool, iterations: int) -> None:
    async with database(pg) as url:
        rt = Runtime(temp_config(db_url=url))
        await rt.start(probe_models=False)
        try:
            t0 = time.perf_counter()
            await seed(rt, sessions)
            await seed_rows(rt, active, rows)
            print(
                f"{rt.store.dialect}: {sessions:,} sessions, {rows:,} deliveries and turns "
                f"over 60 days in {active:,} of them, built in {time.perf_counter() - t0:.1f} s"
            )
            store = rt.store
            until = now_ms()
            since = range_start(until, 30)

            async def usage() -> None:
                usage_report(await store.usage_cells(since, until), since, until)

            await timed("watermarks (live feed, 1/s)", lambda: store.watermarks(), iterations)
            await timed(
                "overview counts",
                lambda: asyncio.gather(store.run_counts(), store.failed_since(until - DAY)),
                iterations,
            )
            await timed(
                "sessions channel=telegram kind=group",
                lambda: store.list_sessions(
                    SessionQuery(limit=200, kinds=("group",), channels=("telegram",))
                ),
                iterations,
            )
            await timed(
                "sessions q=chat 99",
                lambda: store.list_sessions(SessionQuery(limit=200, text="chat 99")),
                iterations,
            )
            await timed("usage, 30 days", usage, max(3, iterations // 10))
        finally:
            await rt.stop()
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument(
        "--active", type=int, default=200, help="sessions the turns are in (at most --sessions)"
    )
    parser.add_argument("--iterations", type=int, default=50)
    parser.add_argument("--pg", action="store_true", help="PostgreSQL at 127.0.0.1:5432")
    args = parser.parse_args()
    asyncio.run(
        run(args.sessions, min(args.active, args.sessions), args.rows, args.pg, args.iterations)
    )


if __name__ == "__main__":
    main()
