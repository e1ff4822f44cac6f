"""Memory stays bounded: the gateway's RSS after 10,000 turns over 1,000 sessions, against its
RSS after the first 1,000 (target: within 20 MiB).

A real `crosstalk gateway` child process with the loopback fake model; clients post
`/v1/chat/completions` round-robin over the sessions, so every session's history grows. RSS is
read from /proc (VmRSS) between the phases.

    .venv/bin/python -m bench.bench_memory_growth [--sessions 1000] [--turns 10000] [--pg]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

import aiohttp

from bench.bench_http_turns import _client, cpu_seconds
from tests.fakes.model import FakeModelServer
from tests.gateway_process import GatewayProcess, write_config

CLIENTS = 16


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


async def turns(gw: GatewayProcess, sessions: int, count: int, offset: int) -> None:
    """`count` turns by CLIENTS clients, each over its own share of the sessions."""
    keys = [f"mem-{i}" for i in range(sessions)]
    share = [keys[c::CLIENTS] for c in range(CLIENTS)]
    per = count // CLIENTS
    samples: list[float] = []
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=CLIENTS)) as http:
        await asyncio.gather(
            *(
                _client(
                    http,
                    gw.url,
                    gw.token,
                    s[offset % len(s) :] + s[: offset % len(s)],
                    per,
                    samples,
                )
                for s in share
                if s
            )
        )


async def bench(sessions: int, total: int, first: int, db_url: str | None) -> None:
    async with FakeModelServer() as fake:
        state = Path(tempfile.mkdtemp(prefix="crosstalk-bench-"))
        config = write_config(state / "crosstalk.yaml", state / "state", fake)
        if db_url:
            text = config.read_text(encoding="utf-8").replace(
                "gateway:\n", f"gateway:\n  database:\n    url: {db_url}\n", 1
            )
            config.write_text(text, encoding="utf-8")
        async with GatewayProcess(config) as gw:
            assert gw.proc is not None
            pid = gw.proc.pid
            idle = rss_mib(pid)
            t0, cpu0 = time.perf_counter(), cpu_seconds(pid)
            await turns(gw, sessions, first, 0)
            after_first = rss_mib(pid)
            await turns(gw, sessions, total - first, first)
            after_all = rss_mib(pid)
            elapsed, cpu = time.perf_counter() - t0, cpu_seconds(pid) - cpu0
    where = "postgresql" if db_url else "sqlite"
    print(
        f"{where}: RSS idle {idle:.1f} MiB, after {first:,} turns {after_first:.1f} MiB, "
        f"after {total:,} turns over {sessions:,} sessions {after_all:.1f} MiB"
    )
    print(
        f"{where}: growth from {first:,} to {total:,} turns {after_all - after_first:+.1f} MiB "
        f"(target ≤ 20 MiB); {total / elapsed:.0f} turns/s, gateway CPU "
        f"{cpu / total * 1000:.2f} ms/turn"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--turns", type=int, default=10_000)
    ap.add_argument("--first", type=int, default=1000, help="turns before the first reading")
    ap.add_argument("--pg", action="store_true", help="PostgreSQL instead of SQLite")
    args = ap.parse_args()
    if not args.pg:
        asyncio.run(bench(args.sessions, args.turns, args.first, None))
        return

    async def on_pg() -> None:
        from tests.pg import fresh_pg_database

        async with fresh_pg_database() as url:
            await bench(args.sessions, args.turns, args.first, url)

    asyncio.run(on_pg())


if __name__ == "__main__":
    main()
