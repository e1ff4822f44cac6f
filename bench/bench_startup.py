"""Gateway start time (process spawn → web chat ready) and idle resident memory.

Targets: start ≤ 1.5 s, idle RSS ≤ 120 MiB. Runs the real `crosstalk gateway` on the embedded
defaults (SQLite, web chat) in a temporary state directory.

    .venv/bin/python -m bench.bench_startup [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import sys
import tempfile
import time
from pathlib import Path


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def one(idle_seconds: float, with_model: bool) -> tuple[float, float, float]:
    state = tempfile.mkdtemp(prefix="crosstalk-start-")
    env = {**os.environ, "CROSSTALK_STATE_DIR": state, "CROSSTALK_GATEWAY_PORT": str(_port())}
    if with_model:
        cfg = Path(state) / "crosstalk.yaml"
        cfg.write_text("models:\n  providers:\n    local:\n      baseUrl: http://127.0.0.1:9/v1\n"
                       "agents:\n  defaults:\n    model: local/m\n")
        env["CROSSTALK_CONFIG"] = str(cfg)
    t0 = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "core.cli.main", "gateway", env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    assert proc.stdout is not None
    while True:
        line = await proc.stdout.readline()
        if not line:
            raise SystemExit("gateway exited early")
        if b"Web chat:" in line:
            break
    ready = time.perf_counter() - t0
    rss_ready = _rss_mib(proc.pid)
    await asyncio.sleep(idle_seconds)  # idle on purpose: this measures memory at rest
    rss_idle = _rss_mib(proc.pid)
    proc.terminate()
    await proc.wait()
    return ready, rss_ready, rss_idle


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--idle", type=float, default=5.0)
    ap.add_argument("--with-model", action="store_true",
                    help="configure a model provider, so the model stack is imported at idle")
    args = ap.parse_args()
    results = [asyncio.run(one(args.idle, args.with_model)) for _ in range(args.runs)]
    starts = sorted(r[0] for r in results)
    print(f"start to ready: min={starts[0]:.2f} s median={starts[len(starts) // 2]:.2f} s "
          f"max={starts[-1]:.2f} s (n={len(starts)})")
    print(f"RSS at ready: {max(r[1] for r in results):.0f} MiB; idle after {args.idle:.0f} s "
          f"{'(model configured) ' if args.with_model else ''}{max(r[2] for r in results):.0f} MiB")


if __name__ == "__main__":
    main()
