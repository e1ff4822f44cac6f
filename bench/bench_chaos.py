"""Chaos benchmark (decision D16): a real gateway SIGKILLed at random moments during bursts of
Telegram, Slack, WhatsApp or Signal messages from the fake platforms, or of mail to a real IMAP
server, restarted each time; the ledger is checked at the end.

Prints messages, kills, duplicates, losses (silent), turns aborted by a kill, chunks resent
after a crash, and the wall time, per database backend. It prints figures; it asserts nothing.

    .venv/bin/python -m bench.bench_chaos [--rounds 8] [--burst 10] [--seed 1] [--backend both]
        [--platform both|all|telegram|slack|whatsapp|signal|email]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path

from tests.chaos import ChaosReport, run_chaos
from tests.pg import fresh_pg_database


async def one(platform: str, backend: str, args: argparse.Namespace) -> ChaosReport:
    tmp = Path(tempfile.mkdtemp(prefix="crosstalk-chaos-"))
    if backend == "postgresql":
        async with fresh_pg_database() as url:
            return await run_chaos(
                tmp,
                db_url=url,
                rounds=args.rounds,
                burst=args.burst,
                seed=args.seed,
                kill_within=args.kill_within,
                platform=platform,
            )
    return await run_chaos(
        tmp,
        rounds=args.rounds,
        burst=args.burst,
        seed=args.seed,
        kill_within=args.kill_within,
        platform=platform,
    )


async def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--rounds", type=int, default=8, help="start → burst → SIGKILL cycles")
    p.add_argument("--burst", type=int, default=10, help="messages per cycle")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--kill-within",
        type=float,
        default=3.0,
        help="the kill comes at a random moment within this many seconds",
    )
    p.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    p.add_argument(
        "--platform",
        default="both",
        choices=["telegram", "slack", "whatsapp", "signal", "email", "both", "all"],
        help="both: Telegram and Slack; all: the five platforms that redeliver",
    )
    args = p.parse_args()
    backends = ["sqlite", "postgresql"] if args.backend == "both" else [args.backend]
    platforms = {
        "both": ["telegram", "slack"],
        "all": ["telegram", "slack", "whatsapp", "signal", "email"],
    }.get(args.platform, [args.platform])
    for platform in platforms:
        for backend in backends:
            report = await one(platform, backend, args)
            print(report.line(), flush=True)
            for problem in report.problems:
                print(f"  {problem}", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
