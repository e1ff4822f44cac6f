"""`sessions_search` over 1,000,000 messages in 10,000 sessions (target: p50 ≤ 20 ms), and the
last 50 messages of a 1,000,000-message session (≤ 5 ms) beside the index, SQLite and PostgreSQL.

Messages are sentences of 12 words drawn from a 20,000-word vocabulary with Zipf-like
frequencies (so some words are in a third of all messages and most in a few dozen), every
thousandth holding the phrase "launch date"; they are stored by batched inserts and indexed
by one set-based statement (what the D66 migration's backfill does, without its Python pass).
Measured through the tool (`POST /tools/invoke`'s path without HTTP): a rare word, two words,
a phrase, a word in 30% of all messages, and one session's search; then the 1,000,000-message
session's tail and a `messageId` window in its middle.

    .venv/bin/python -m bench.bench_search [--messages 1000000] [--sessions 10000] [--pg]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import random
import statistics
import time
from typing import Any

from sqlalchemy import Connection, insert, text

from bench.bench_history_tail import fill as fill_one_session
from bench.bench_sessions_list_scale import database
from bench.common import summary, temp_config
from core.runtime import Runtime
from core.store.tables import MessageRow, SessionRow

S = SessionRow.__table__  # type: ignore[attr-defined]
M = MessageRow.__table__  # type: ignore[attr-defined]
VOCABULARY = 20_000
WORDS = 12
BATCH = 20_000
SQLITE_INDEX = (
    "INSERT INTO messages_fts (rowid, body) SELECT id, json_extract(content, '$[0].text') "
    "FROM messages WHERE role IN ('user', 'assistant')"
)
PG_INDEX = (
    "INSERT INTO messages_fts (message_id, tsv) SELECT id, "
    "to_tsvector('simple', content->0->>'text') FROM messages "
    "WHERE role IN ('user', 'assistant')"
)


def _word(rank: int) -> str:
    return f"w{rank}"


_RANKS = range(1, VOCABULARY + 1)
_CUMULATIVE = list(itertools.accumulate(1 / r for r in _RANKS))  # Zipf: frequency ∝ 1/rank


def _sentence(rng: random.Random, i: int) -> str:
    words = [_word(r) for r in rng.choices(_RANKS, cum_weights=_CUMULATIVE, k=WORDS)]
    if i % 1000 == 0:
        words[3:5] = ["launch", "date"]
    return " ".join(words)


async def fill(rt: Runtime, messages: int, sessions: int) -> None:
    rng = random.Random(7)
    now = int(time.time() * 1000)
    rows = [
        {
            "key": f"agent:main:dm:s{n}",
            "session_id": f"sid-{n}",
            "agent_id": "main",
            "kind": "main",
            "created_at": now,
            "updated_at": now - n,
        }
        for n in range(sessions)
    ]
    await rt.store.write(lambda c: c.execute(insert(S), rows))
    per = messages // sessions
    for start in range(0, messages, BATCH):
        batch = [
            {
                "session_key": f"agent:main:dm:s{i // per}",
                "session_id": f"sid-{i // per}",
                "role": "user" if i % 2 else "assistant",
                "content": [{"type": "text", "text": _sentence(rng, i)}],
                "timestamp": now - messages + i,
                "seq": i % per + 1,
            }
            for i in range(start, min(messages, start + BATCH))
        ]
        await rt.store.write(lambda c, b=batch: c.execute(insert(M), b))  # type: ignore[misc]

    def index(c: Connection) -> None:
        c.execute(text(SQLITE_INDEX if rt.store.dialect == "sqlite" else PG_INDEX))
        c.execute(text("ANALYZE"))

    await rt.store.write(index)


async def _time(call: Any, iterations: int) -> list[float]:
    for _ in range(5):
        await call()
    samples = []
    for _ in range(iterations):
        t0 = time.perf_counter()
        await call()
        samples.append((time.perf_counter() - t0) * 1000)
    return samples


async def measure(messages: int, sessions: int, db_url: str | None, iterations: int) -> None:
    rt = Runtime(temp_config(db_url=db_url))
    await rt.start(probe_models=False)
    where = rt.store.dialect
    try:
        t0 = time.perf_counter()
        await fill(rt, messages, sessions)
        print(
            f"{where}: {messages:,} messages in {sessions:,} sessions stored and indexed in "
            f"{time.perf_counter() - t0:.1f} s"
        )
        ctx = rt.services.context_for(await rt.services.ensure_session("agent:main:main"))
        cases: list[tuple[str, dict[str, Any]]] = [
            ("rare word (~290 hits)", {"query": "w4000"}),
            ("two words", {"query": "w300 w40"}),
            ('phrase "launch date"', {"query": '"launch date"'}),
            ("word in 30% of messages", {"query": "w2"}),
            ("one session", {"query": "w2", "sessionKey": "agent:main:dm:s77"}),
        ]
        for label, args in cases:
            got: dict[str, Any] = {}

            async def call(a: dict[str, Any] = args, got: dict[str, Any] = got) -> None:
                got.update(await rt.tools.invoke(rt.tool_env, "sessions_search", a, ctx))

            samples = await _time(call, iterations)
            p50 = statistics.median(samples)
            print(
                f"  {summary(f'sessions_search {label:<26}', samples)}  "
                f"(results {got.get('count')}; target ≤ 20 ms: p50 {p50:.2f})"
            )
        t0 = time.perf_counter()
        sid = await fill_one_session(rt, 1_000_000)
        print(f"{where}: one 1,000,000-message session added in {time.perf_counter() - t0:.1f} s")
        key = "agent:main:dm:bulk"
        middle = await rt.store.history(sid, limit=1)
        mid = (middle[0].id or 0) - 500_000
        history_cases: list[tuple[str, dict[str, Any]]] = [
            ("last 50 (sessions_history)", {"sessionKey": key, "limit": 50}),
            ("50 around a messageId", {"sessionKey": key, "limit": 50, "messageId": mid}),
        ]
        for label, args in history_cases:
            n: list[int] = []

            async def hist(a: dict[str, Any] = args, n: list[int] = n) -> None:
                out = await rt.tools.invoke(rt.tool_env, "sessions_history", a, ctx)
                n.append(len(out["messages"]))

            samples = await _time(hist, iterations)
            print(
                f"  {summary(f'{label:<28}', samples)}  (messages {n[-1]}; target ≤ 5 ms: "
                f"p50 {statistics.median(samples):.2f})"
            )
    finally:
        await rt.stop()


async def run(messages: int, sessions: int, pg: bool, iterations: int) -> None:
    async with database(pg) as url:
        await measure(messages, sessions, url, iterations)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=1_000_000)
    ap.add_argument("--sessions", type=int, default=10_000)
    ap.add_argument("--iterations", type=int, default=50)
    ap.add_argument("--pg", action="store_true", help="also on the local PostgreSQL server")
    args = ap.parse_args()
    asyncio.run(run(args.messages, args.sessions, False, args.iterations))
    if args.pg:
        asyncio.run(run(args.messages, args.sessions, True, args.iterations))


if __name__ == "__main__":
    main()
