"""The last 50 messages of a 1,000,000-message session (target: ≤ 5 ms), SQLite and PostgreSQL.

One session holds a million placed messages (every fourth a tool result), inserted by one
set-based INSERT … SELECT in the database itself (a recursive CTE on SQLite, generate_series on
PostgreSQL), so the fixture takes seconds. A few small sessions sit beside it. Measured through
the store API: the `sessions_history` read (tool results filtered out before the limit), the
same with tool results, and a turn's model context (placed messages only).

    .venv/bin/python -m bench.bench_history_tail [--messages 1000000] [--pg]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

from sqlalchemy import Connection, text

from bench.bench_sessions_list_scale import database
from bench.common import summary, temp_config
from core.runtime import Runtime

SQLITE_FILL = """
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < :count)
INSERT INTO messages (session_key, session_id, role, content, timestamp, tool_call_id,
                      tool_name, seq)
SELECT :key, :sid, CASE i % 4 WHEN 0 THEN 'toolResult' WHEN 1 THEN 'user' ELSE 'assistant' END,
       '[{"type": "text", "text": "message ' || i || '"}]', :ts + i,
       CASE i % 4 WHEN 0 THEN 'call' || i END, CASE i % 4 WHEN 0 THEN 'lookup' END, i
FROM n
"""
PG_FILL = """
INSERT INTO messages (session_key, session_id, role, content, timestamp, tool_call_id,
                      tool_name, seq)
SELECT :key, :sid, CASE i % 4 WHEN 0 THEN 'toolResult' WHEN 1 THEN 'user' ELSE 'assistant' END,
       json_build_array(json_build_object('type', 'text', 'text', 'message ' || i)),
       CAST(:ts AS BIGINT) + i, CASE i % 4 WHEN 0 THEN 'call' || i END,
       CASE i % 4 WHEN 0 THEN 'lookup' END, i
FROM generate_series(1, :count) AS i
"""
KEY = "agent:main:dm:bulk"


async def fill(rt: Runtime, count: int) -> str:
    """The big session's id, after `count` messages went into it (plus small neighbours)."""
    entry = await rt.services.ensure_session(KEY)
    for n in range(5):
        await rt.services.ensure_session(f"agent:main:dm:small{n}")
    sql = SQLITE_FILL if rt.store.dialect == "sqlite" else PG_FILL
    params = {"key": KEY, "sid": entry.session_id, "count": count, "ts": 1_700_000_000_000}

    def op(c: Connection) -> None:
        c.execute(text(sql), params)
        c.execute(text("ANALYZE"))  # as autovacuum would after such a load

    await rt.store.write(op)
    return entry.session_id


async def measure(count: int, db_url: str | None, iterations: int) -> None:
    rt = Runtime(temp_config(db_url=db_url))
    await rt.start(probe_models=False)
    try:
        t0 = time.perf_counter()
        sid = await fill(rt, count)
        print(
            f"{rt.store.dialect}: {count:,} messages inserted in {time.perf_counter() - t0:.1f} s"
        )
        cases: tuple[tuple[str, dict[str, Any]], ...] = (
            ("sessions_history (no tools)", {"include_tools": False}),
            ("with tool results", {}),
            ("turn context (placed only)", {"placed_only": True}),
        )
        for label, kw in cases:
            for _ in range(10):
                await rt.store.history(sid, limit=50, **kw)
            samples = []
            for _ in range(iterations):
                t1 = time.perf_counter()
                got = await rt.store.history(sid, limit=50, **kw)
                samples.append((time.perf_counter() - t1) * 1000)
            assert len(got) == 50
            print(
                "  "
                + summary(f"last 50 of {count:,}: {label:<28}", samples)
                + f"  (target ≤ 5 ms: p50 {statistics.median(samples):.2f})"
            )
    finally:
        await rt.stop()


async def run(count: int, pg: bool, iterations: int) -> None:
    async with database(pg) as url:
        await measure(count, url, iterations)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=1_000_000)
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument(
        "--pg",
        action="store_true",
        help="also measure on a fresh database of the local PostgreSQL server",
    )
    args = ap.parse_args()
    asyncio.run(run(args.messages, False, args.iterations))
    if args.pg:
        asyncio.run(run(args.messages, True, args.iterations))


if __name__ == "__main__":
    main()
