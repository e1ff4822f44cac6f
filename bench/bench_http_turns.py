"""Agent turns per second through the real gateway process (target: ≥ 150 turns/s, 16 clients).

A real `crosstalk gateway` child process, SQLite (default) or PostgreSQL, the loopback fake
OpenAI-compatible model (instant echo over HTTP) and N concurrent clients posting
`/v1/chat/completions`, each into its own sessions. Gateway overhead is the client-side p50
latency at one client minus the p50 of calling the fake model directly.

The load generator is plain aiohttp (not the openai SDK) and the fake model runs in this
process too; it prints its own CPU per turn (~0.5 ms, a tenth of the gateway's), so on two
cores it is not what limits the figure. The gateway's path is the production one.

    .venv/bin/python -m bench.bench_http_turns [--clients 16] [--turns 2000] [--pg]
        [--search-index on|off|both]

`--search-index both` runs the load twice, with the `sessions_search` index written with every
message (as always) and without it (the gateway started with CROSSTALK_BENCH_NO_SEARCH_INDEX=1),
and prints both rates and their ratio (issue 22: no more than 5% lower with the index).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

import aiohttp

from core.store.search_index import NO_INDEX_ENV
from tests.fakes.model import FakeModelServer
from tests.gateway_process import GatewayProcess, write_config


async def _client(
    http: aiohttp.ClientSession,
    url: str,
    token: str,
    sessions: list[str],
    turns: int,
    samples: list[float],
) -> None:
    for i in range(turns):
        key = sessions[i % len(sessions)]
        t0 = time.perf_counter()
        async with http.post(
            f"{url}/v1/chat/completions",
            json={"model": "crosstalk", "messages": [{"role": "user", "content": f"m{i}"}]},
            headers={"Authorization": f"Bearer {token}", "x-crosstalk-session-key": key},
        ) as resp:
            await resp.read()
            if resp.status != 200:
                raise RuntimeError(f"HTTP {resp.status}: {await resp.text()}")
        samples.append((time.perf_counter() - t0) * 1000)


async def _load(gw: GatewayProcess, clients: int, turns: int) -> tuple[float, list[float]]:
    samples: list[float] = []
    conn = aiohttp.TCPConnector(limit=clients)
    async with aiohttp.ClientSession(connector=conn) as http:
        per = max(1, turns // clients)
        t0 = time.perf_counter()
        await asyncio.gather(
            *(
                _client(http, gw.url, gw.token, [f"bench-{c}-{s}" for s in range(4)], per, samples)
                for c in range(clients)
            )
        )
        elapsed = time.perf_counter() - t0
    return len(samples) / elapsed, samples


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (Linux /proc): the load-independent
    figure, since wall-clock turns/s moves with whatever else shares the machine."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _model_p50(fake: FakeModelServer, n: int = 200) -> float:
    samples = []
    async with aiohttp.ClientSession() as http:
        for i in range(n):
            t0 = time.perf_counter()
            async with http.post(
                f"{fake.base_url}/chat/completions",
                json={"model": "fake-model", "messages": [{"role": "user", "content": f"m{i}"}]},
            ) as resp:
                await resp.read()
            samples.append((time.perf_counter() - t0) * 1000)
    return statistics.median(samples)


async def _searchable(gw: GatewayProcess) -> int:
    """How many stored messages `sessions_search` finds for one of the bench's words: the
    check that `--search-index off` really wrote no index (and `on` did)."""
    body = {"tool": "sessions_search", "args": {"query": "m1", "limit": 50}, "sessionKey": "main"}
    async with aiohttp.ClientSession() as http:
        async with http.post(
            f"{gw.url}/tools/invoke",
            json=body,
            headers={"Authorization": f"Bearer {gw.token}"},
        ) as resp:
            out = await resp.json()
    return int(out["result"]["details"]["count"])


async def bench(
    clients: int, turns: int, db_url: str | None, index: bool = True
) -> tuple[float, float]:
    """Print the figures of one run; returns (turns/s, gateway CPU ms per turn)."""
    env = {} if index else {NO_INDEX_ENV: "1"}
    async with FakeModelServer() as fake:
        state = Path(tempfile.mkdtemp(prefix="crosstalk-bench-"))
        extra = f"  database:\n    url: {db_url}\n" if db_url else ""
        config = write_config(state / "crosstalk.yaml", state / "state", fake)
        if extra:
            text = config.read_text(encoding="utf-8").replace("gateway:\n", "gateway:\n" + extra, 1)
            config.write_text(text, encoding="utf-8")
        async with GatewayProcess(config, env=env) as gw:
            await _load(gw, clients, min(200, turns))  # warm-up: model stack, caches
            assert gw.proc is not None
            cpu0, own0 = cpu_seconds(gw.proc.pid), time.process_time()
            rate, samples = await _load(gw, clients, turns)
            cpu = cpu_seconds(gw.proc.pid) - cpu0
            own = time.process_time() - own0
            cpu1 = cpu_seconds(gw.proc.pid)
            _, single = await _load(gw, 1, 200)
            cpu1 = cpu_seconds(gw.proc.pid) - cpu1
            model = await _model_p50(fake)
            found = await _searchable(gw)
        s = sorted(samples)
        where = ("postgresql" if db_url else "sqlite") + ("" if index else " (no search index)")
        print(
            f"{where}: {clients} clients, {len(s)} turns: {rate:.0f} turns/s, "
            f"p50 {statistics.median(s):.1f} ms, p95 {s[int(len(s) * 0.95)]:.1f} ms"
        )
        print(
            f"{where}: gateway CPU {cpu / len(s) * 1000:.2f} ms/turn "
            f"(process user+system time over the {len(s)} turns; load-independent); "
            f"this bench process (clients + fake model) {own / len(s) * 1000:.2f} ms/turn"
        )
        print(
            f"{where}: one client p50 {statistics.median(single):.2f} ms, fake model p50 "
            f"{model:.2f} ms, gateway overhead p50 {statistics.median(single) - model:.2f} ms, "
            f"gateway CPU {cpu1 / len(single) * 1000:.2f} ms/turn"
        )
    print(f"{where}: sessions_search finds {found} of the bench's messages m1 (0: not indexed)")
    return rate, cpu / len(s) * 1000


async def one_run(clients: int, turns: int, pg: bool, index: bool) -> tuple[float, float]:
    """One run on a fresh database (a new SQLite state directory, or a new PostgreSQL one)."""
    if not pg:
        return await bench(clients, turns, None, index=index)
    from tests.pg import fresh_pg_database

    async with fresh_pg_database() as url:
        return await bench(clients, turns, url, index=index)


async def compare(clients: int, turns: int, pg: bool, mode: str) -> None:
    """`--search-index`: one run as asked, or both (without the index first), each on a fresh
    database so neither inherits the other's history."""
    if mode != "both":
        await one_run(clients, turns, pg, index=mode == "on")
        return
    rate_off, cpu_off = await one_run(clients, turns, pg, index=False)
    rate_on, cpu_on = await one_run(clients, turns, pg, index=True)
    where = "postgresql" if pg else "sqlite"
    print(
        f"{where}: with the search index {rate_on:.0f} turns/s ({cpu_on:.2f} ms CPU/turn), "
        f"without {rate_off:.0f} turns/s ({cpu_off:.2f} ms CPU/turn): "
        f"{(rate_on / rate_off - 1) * 100:+.1f}% turns/s, "
        f"{(cpu_on / cpu_off - 1) * 100:+.1f}% CPU per turn (target: no more than 5% lower)"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--turns", type=int, default=2000)
    ap.add_argument(
        "--pg", action="store_true", help="use a fresh database on the local PostgreSQL server"
    )
    ap.add_argument(
        "--search-index",
        choices=("on", "off", "both"),
        default="on",
        help="write the sessions_search index (on, as always), not (off), or compare both",
    )
    args = ap.parse_args()
    asyncio.run(compare(args.clients, args.turns, args.pg, args.search_index))


if __name__ == "__main__":
    main()
