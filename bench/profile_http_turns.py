"""Where the gateway's CPU goes per turn: cProfile of a real `crosstalk gateway` process under
the load of `bench_http_turns` (loopback fake model, N clients on /v1/chat/completions).

Profiling covers only the measured load (not start-up or warm-up): the child process starts
cProfile on SIGUSR1 and writes the stats on SIGUSR2. Prints the share of profiled CPU by
package and the top functions; cProfile inflates absolute times, so compare shares.

    .venv/bin/python -m bench.profile_http_turns [--clients 16] [--turns 600] [--out FILE] [--pg]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import cProfile
import gc
import os
import pstats
import re
import signal
import sys
import tempfile
import time
from pathlib import Path

from bench.bench_http_turns import _load
from tests.fakes.model import FakeModelServer
from tests.gateway_process import GatewayProcess, write_config
from tests.polling import eventually

WRITTEN = "profile written"
GC_LINE = "gc collections by generation, ms:"


class ProfiledGateway(GatewayProcess):
    """The gateway child, run through this module's `--child` mode."""

    def __init__(self, config: Path, out: Path) -> None:
        super().__init__(config)
        self.out = out

    async def __aenter__(self) -> ProfiledGateway:
        env = {
            **os.environ,
            "CROSSTALK_GATEWAY_PORT": str(self.port),
            "NO_PROXY": "127.0.0.1,localhost",
        }
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bench.profile_http_turns",
            "--child",
            str(self.out),
            "--config",
            str(self.config),
            "gateway",
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        await asyncio.wait_for(self._wait_ready(), 60)
        return self


def _child(out: str, argv: list[str]) -> int:
    from core.edge.cli.main import main

    prof = cProfile.Profile()
    collections_ = [0, 0, 0]
    gc_seconds = [0.0, 0.0, 0.0]
    started = [0.0]

    def on_gc(phase: str, info: dict[str, int]) -> None:  # cProfile does not see collections
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            collections_[info["generation"]] += 1
            gc_seconds[info["generation"]] += time.perf_counter() - started[0]

    def start(*_: object) -> None:
        gc.callbacks.append(on_gc)
        prof.enable()

    def dump(*_: object) -> None:
        prof.disable()
        gc.callbacks.remove(on_gc)
        prof.dump_stats(out)
        print(f"{GC_LINE} {collections_} {[round(s * 1000, 1) for s in gc_seconds]}", flush=True)
        print(WRITTEN, flush=True)

    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, dump)
    return main(argv)


def _package(filename: str) -> str:
    m = re.search(r"site-packages/([A-Za-z0-9_]+)", filename)
    if m:
        return m.group(1)
    m = re.search(r"/((?:core|adapters|plugins)/[a-z_]+)/", filename)
    if m:
        return m.group(1)
    return "builtins (C)" if filename == "~" else "stdlib"


HOT_SPOTS = {
    "openai SDK request-body transform": r"_transform.py:\d+\(async_maybe_transform\)",
    "openai chat body, plain walk (D40)": r"core/features/models/openai_fast.py:\d+\(transform\)",
    "store writes (one commit each)": r"core/store/store.py:\d+\(write\)",
    "store reads": r"core/store/store.py:\d+\(read\)",
    "pydantic-ai request preparation (tool schemas)": (
        r"pydantic_ai/models/__init__.py:\d+\(prepare_request\)"
    ),
    "HTTP to the model (httpx send)": r"httpx2?/_client.py:\d+\(send\)",
    "metrics (self time)": r"core/engine/observability/",
}


SCHEDULING = (
    "asyncio/",
    "anyio/",
    "_contextvars",
    "selectors",
    "sniffio",
    "get_running_loop",
    "weakref",
    "deque",
    "__new__ of type",
    "set' objects",
    "socket",
)
"""What the event loop's own scheduling calls: how often it runs per turn depends on how the
concurrent turns interleave, so the count of everything else is the figure to compare."""


def report(path: Path, turns: int, top: int = 15) -> None:
    stats = pstats.Stats(str(path))
    raw = stats.stats  # type: ignore[attr-defined]
    total = sum(v[2] for v in raw.values())
    by_pkg: collections.Counter[str] = collections.Counter()
    for (filename, _, _), (_, _, tottime, _, _) in raw.items():
        by_pkg[_package(filename)] += tottime
    calls = stats.total_calls  # type: ignore[attr-defined]
    scheduling = sum(
        v[1] for (f, _, fn), v in raw.items() if any(s in f"{f}:{fn}" for s in SCHEDULING)
    )
    print(
        f"profiled CPU {total / turns * 1000:.1f} ms/turn (inflated by cProfile); "
        f"{calls / turns:,.0f} Python function calls per turn, "
        f"{(calls - scheduling) / turns:,.0f} of them not the event loop's scheduling "
        "(that part grows with load; the rest does not); by package:"
    )
    for name, t in by_pkg.most_common(top):
        print(f"  {t / total * 100:5.1f}%  {name}")
    print("known hot spots (cumulative share of profiled CPU, calls per turn):")
    for label, pattern in HOT_SPOTS.items():
        rows = [v for (f, line, fn), v in raw.items() if re.search(pattern, f"{f}:{line}({fn})")]
        if not rows:
            continue
        spent = sum(v[2] for v in rows) if label.startswith("metrics") else max(v[3] for v in rows)
        calls = sum(v[1] for v in rows) / turns
        print(f"  {spent / total * 100:5.1f}%  {calls:5.1f}/turn  {label}")
    stats.sort_stats("tottime").print_stats(top)


async def profile(clients: int, turns: int, out: Path, db_url: str | None = None) -> None:
    async with FakeModelServer() as fake:
        state = Path(tempfile.mkdtemp(prefix="crosstalk-prof-"))
        config = write_config(state / "crosstalk.yaml", state / "state", fake)
        if db_url:
            text = config.read_text(encoding="utf-8").replace(
                "gateway:\n", f"gateway:\n  database:\n    url: {db_url}\n", 1
            )
            config.write_text(text, encoding="utf-8")
        async with ProfiledGateway(config, out) as gw:
            assert gw.proc is not None
            await _load(gw, clients, min(200, turns))  # warm-up
            gw.proc.send_signal(signal.SIGUSR1)
            rate, samples = await _load(gw, clients, turns)
            gw.proc.send_signal(signal.SIGUSR2)

            async def written() -> bool:
                return any(WRITTEN in line for line in gw.output)

            await eventually(written, 60, "the profile written by the gateway")
    print(f"{len(samples)} turns at {rate:.0f} turns/s under the profiler, {clients} clients")
    for line in gw.output:
        if GC_LINE in line:
            print(line.strip(), f"(over {len(samples)} turns; inflated by cProfile too)")
    report(out, len(samples))


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        raise SystemExit(_child(sys.argv[2], sys.argv[3:]))
    ap = argparse.ArgumentParser()
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--turns", type=int, default=600)
    ap.add_argument("--out", type=Path, default=None, help="keep the pstats file here")
    ap.add_argument(
        "--pg", action="store_true", help="use a fresh database on the local PostgreSQL server"
    )
    args = ap.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="crosstalk-prof-")) / "gateway.prof"
    if not args.pg:
        asyncio.run(profile(args.clients, args.turns, out))
        return

    async def on_pg() -> None:
        from tests.pg import fresh_pg_database

        async with fresh_pg_database() as url:
            await profile(args.clients, args.turns, out, url)

    asyncio.run(on_pg())


if __name__ == "__main__":
    main()
