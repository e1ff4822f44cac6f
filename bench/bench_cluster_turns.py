"""Agent turns per second for one and for two gateway processes on one PostgreSQL (D27).

Real `crosstalk gateway` child processes on a fresh database of the local PostgreSQL server,
the loopback fake model (instant echo) and N concurrent clients posting `/v1/chat/completions`,
each into its own sessions, spread round robin over the processes. Printed side by side; on a
2-core machine the second process mostly shows the cost of coordination, not a speed-up.

    .venv/bin/python -m bench.bench_cluster_turns [--clients 16] [--turns 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path

import aiohttp

from tests.fakes.model import FakeModelServer
from tests.gateway_process import GatewayProcess


def _config(path: Path, state: Path, fake: FakeModelServer, url: str) -> Path:
    path.write_text(
        f"gateway:\n  stateDir: {state}\n  auth:\n    token: e2e-token\n"
        f"  database:\n    url: {url}\n"
        f"models:\n  providers:\n    fake:\n      baseUrl: {fake.base_url}\n      apiKey: t\n"
        "agents:\n  defaults:\n    model: fake/fake-model\n",
        encoding="utf-8",
    )
    return path


async def _client(
    http: aiohttp.ClientSession, gw: GatewayProcess, key: str, turns: int, samples: list[float]
) -> None:
    for i in range(turns):
        t0 = time.perf_counter()
        async with http.post(
            f"{gw.url}/v1/chat/completions",
            json={"model": "crosstalk", "messages": [{"role": "user", "content": f"m{i}"}]},
            headers={"Authorization": f"Bearer {gw.token}", "x-crosstalk-session-key": key},
        ) as resp:
            await resp.read()
            if resp.status != 200:
                raise RuntimeError(f"HTTP {resp.status}: {await resp.text()}")
        samples.append((time.perf_counter() - t0) * 1000)


async def _load(
    gws: list[GatewayProcess], clients: int, turns: int, tag: str
) -> tuple[float, list[float]]:
    samples: list[float] = []
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=clients)) as http:
        per = max(1, turns // clients)
        t0 = time.perf_counter()
        await asyncio.gather(
            *(_client(http, gws[c % len(gws)], f"{tag}-{c}", per, samples) for c in range(clients))
        )
        return len(samples) / (time.perf_counter() - t0), samples


async def _run(
    processes: int, clients: int, turns: int, url: str, fake: FakeModelServer
) -> tuple[float, list[float]]:
    state = Path(tempfile.mkdtemp(prefix="crosstalk-bench-cluster-"))
    async with AsyncExitStack() as stack:
        gws = [
            await stack.enter_async_context(
                GatewayProcess(_config(state / f"p{i}.yaml", state / f"p{i}", fake, url))
            )
            for i in range(processes)
        ]
        await _load(gws, clients, min(200, turns), f"warm{processes}")
        return await _load(gws, clients, turns, f"run{processes}")


async def bench(clients: int, turns: int) -> None:
    from tests.pg import fresh_pg_database

    async with FakeModelServer() as fake:
        rows = []
        for processes in (1, 2):
            async with fresh_pg_database() as url:
                rate, samples = await _run(processes, clients, turns, url, fake)
            s = sorted(samples)
            rows.append((processes, rate, statistics.median(s), s[int(len(s) * 0.95)]))
    print(f"postgresql, {clients} clients, {turns} turns each run")
    print("processes  turns/s  p50 ms  p95 ms")
    for processes, rate, p50, p95 in rows:
        print(f"{processes:>9}  {rate:>7.0f}  {p50:>6.1f}  {p95:>6.1f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--turns", type=int, default=1000)
    args = ap.parse_args()
    asyncio.run(bench(args.clients, args.turns))


if __name__ == "__main__":
    main()
