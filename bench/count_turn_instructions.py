"""Machine instructions per agent turn in the real gateway process, counted by valgrind's
callgrind: the same count run after run whatever else the machine is doing, where timings on a
shared VM move by ±15% (so before/after comparisons of the turn path use this figure).

The gateway runs under callgrind with counting off; after warm-up turns (the model stack
imported, caches filled) counting is switched on for `--turns` turns from `--clients`
concurrent clients (`/v1/chat/completions`, SQLite, the loopback fake model served by this
process, which is not counted), then dumped. Slow: ~50× the turns' own time.

    .venv/bin/python -m bench.count_turn_instructions [--turns 200] [--clients 4]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import aiohttp

from bench.bench_http_turns import _client
from tests.fakes.model import FakeModelServer
from tests.gateway_process import GatewayProcess, write_config

WARM_UP = 24


async def _turns(gw: GatewayProcess, clients: int, turns: int, tag: str) -> None:
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=clients)) as http:
        per = max(1, turns // clients)
        await asyncio.gather(
            *(
                _client(http, gw.url, gw.token, [f"{tag}-{c}-{s}" for s in range(4)], per, [])
                for c in range(clients)
            )
        )


def _control(pid: int, *args: str) -> None:
    subprocess.run(["callgrind_control", *args, str(pid)], check=True, capture_output=True)


def _instructions(out_dir: Path) -> int:
    """The `Ir` total of the dump taken after the counted turns (not the one at exit)."""
    for path in out_dir.glob("callgrind.out.*"):
        text = path.read_text(errors="replace")
        if re.search(r"^desc: Trigger: dump", text, re.M):
            m = re.search(r"^totals: (\d+)", text, re.M)
            if m is not None:
                return int(m.group(1))
    raise SystemExit(f"no dump with an instruction total in {out_dir}")


async def count(turns: int, clients: int) -> float:
    out_dir = Path(tempfile.mkdtemp(prefix="crosstalk-callgrind-"))
    prefix = [
        "valgrind",
        "--tool=callgrind",
        "--instr-atstart=no",
        f"--callgrind-out-file={out_dir}/callgrind.out.%p",
    ]
    async with FakeModelServer() as fake:
        state = Path(tempfile.mkdtemp(prefix="crosstalk-count-"))
        config = write_config(state / "crosstalk.yaml", state / "state", fake)
        async with GatewayProcess(config, prefix=prefix, ready_within=600) as gw:
            assert gw.proc is not None
            await _turns(gw, clients, WARM_UP, "warm")
            await asyncio.to_thread(_control, gw.proc.pid, "--instr=on")
            await _turns(gw, clients, turns, "count")
            await asyncio.to_thread(_control, gw.proc.pid, "--dump")
            await asyncio.to_thread(_control, gw.proc.pid, "--instr=off")
    return _instructions(out_dir) / turns


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--clients", type=int, default=4)
    args = parser.parse_args()
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        raise SystemExit("valgrind (with callgrind_control) is not installed")
    per_turn = asyncio.run(count(args.turns, args.clients))
    print(
        f"{per_turn / 1e6:.2f} million instructions per turn ({args.turns} turns, "
        f"{args.clients} clients, SQLite; callgrind, the gateway process only)"
    )


if __name__ == "__main__":
    main()
