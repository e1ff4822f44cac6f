"""`sessions_list` latency as the number of sessions grows (target: ≤ 2 ms whatever the count).

.venv/bin/python -m bench.bench_sessions_list [--sessions 100,1000,10000] [--postgres URL]
"""

from __future__ import annotations

import argparse
import asyncio
import time

from sqlalchemy import Connection, insert, text

from bench.common import summary, temp_config
from core.runtime import Runtime
from core.store import TranscriptMessage, now_ms
from core.store.statements import M, S


async def seed(rt: Runtime, count: int) -> None:
    now = now_ms()
    rows = []
    for i in range(count):
        kind = ("group", "other", "cron")[i % 3]
        key = {
            "group": f"agent:main:telegram:group:g{i}",
            "other": f"agent:main:dm:u{i}",
            "cron": f"agent:main:cron:job{i}",
        }[kind]
        rows.append(
            {
                "key": key,
                "session_id": f"00000000-0000-4000-8000-{i:012d}",
                "agent_id": "main",
                "kind": kind,
                "created_at": now - i,
                "updated_at": now - i * 1000,
                "channel": "telegram",
                "last_channel": "telegram",
                "last_to": f"g{i}",
                "display_name": f"chat {i}",
            }
        )
    msgs = []
    for r in rows[:2000]:
        for j in range(5):
            m = TranscriptMessage.text("user" if j % 2 == 0 else "assistant", f"m{j}", now)
            msgs.append(
                {
                    "session_key": r["key"],
                    "session_id": r["session_id"],
                    "role": m.role,
                    "content": m.content,
                    "timestamp": now,
                }
            )

    def op(conn: Connection) -> None:
        for start in range(0, len(rows), 5000):
            conn.execute(insert(S), rows[start : start + 5000])
        conn.execute(insert(M), msgs)

    await rt.store.write(op)
    # a bulk load leaves the planner's statistics empty until autovacuum analyzes the tables
    # (PostgreSQL then picks a bitmap AND over all rows): analyze now, as a live database would
    await rt.store.write(lambda c: c.execute(text("ANALYZE")))


async def bench(count: int, db_url: str | None, iterations: int) -> None:
    rt = Runtime(temp_config(db_url=db_url))
    await rt.start(probe_models=False)
    if rt.warmup is not None:
        await rt.warmup
    try:
        await seed(rt, count)
        entry = await rt.services.ensure_session("agent:main:main")
        ctx = rt.services.context_for(entry)
        for label, args in (
            ("default (limit 50)", {}),
            ("kinds=[cron] limit 20", {"kinds": ["cron"], "limit": 20}),
            ("messageLimit=3", {"messageLimit": 3}),
        ):
            for _ in range(20):
                await rt.tools.invoke(rt.tool_env, "sessions_list", args, ctx)
            samples = []
            for _ in range(iterations):
                t0 = time.perf_counter()
                out = await rt.tools.invoke(rt.tool_env, "sessions_list", args, ctx)
                samples.append((time.perf_counter() - t0) * 1000)
            print(
                summary(
                    f"{rt.store.dialect} sessions={count:>6} {label:<22} rows={out['count']:>3}",
                    samples,
                )
            )
    finally:
        await rt.stop()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", default="100,1000,10000")
    ap.add_argument("--postgres", help="asyncpg URL of an EMPTY database to also measure")
    ap.add_argument("--iterations", type=int, default=200)
    args = ap.parse_args()
    for n in (int(x) for x in args.sessions.split(",")):
        asyncio.run(bench(n, None, args.iterations))
        if args.postgres:
            asyncio.run(bench(n, args.postgres, args.iterations))


if __name__ == "__main__":
    main()
