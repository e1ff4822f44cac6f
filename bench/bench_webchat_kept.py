"""What the web chat reads of the delivery log (D136): the cron and webhook replies it was sent,
read each time a tab opens (also just after `/new`, when none is newer than the reset and the
older ones of the chat are read and left out), and a chunk's origin, read for each chunk sent to
the web chat.

The log holds `--deliveries` rows (default 100,000): one in 100 a cron reply to the web chat,
a third of the rest replies to the web chat, the others Telegram replies.

    .venv/bin/python -m bench.bench_webchat_kept [--deliveries 100000] [--pg]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from typing import Any

from sqlalchemy import insert

from bench.bench_sessions_list_scale import database
from bench.common import summary, temp_config
from core.store import Store
from core.store.tables import DeliveryRow


def rows(n: int) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        cron = i % 100 == 0
        out.append(
            {
                "kind": "cron" if cron else "reply",
                "outcome": "delivered",
                "text": f"reply {i}",
                "created_at": i,
                "session_key": "agent:main:cron:daily" if cron else "agent:main:main",
                "channel": "webchat" if cron or i % 3 == 0 else "telegram",
                "to": "owner",
                "attempts": 1,
            }
        )
    return out


async def measure(n: int, url: str | None, iterations: int) -> None:
    config = temp_config(db_url=url)
    state = config.resolve_state_dir()
    store = Store(url or f"sqlite+aiosqlite:///{state}/crosstalk.db", state)
    await store.open()
    try:
        table = DeliveryRow.__table__  # type: ignore[attr-defined]
        data = rows(n)
        await store.write(lambda c: c.execute(insert(table), data))
        kept, reset, origin = [], [], []
        for _ in range(iterations):
            t = time.perf_counter()
            await store.kept_for("webchat", "owner", ("cron", "hook"))
            kept.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            await store.kept_for("webchat", "owner", ("cron", "hook"), since=n)
            reset.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            await store.delivery_origin(n - 1)
            origin.append((time.perf_counter() - t) * 1000)
        where = "postgresql" if url else "sqlite"
        print(summary(f"{where}: kept replies at tab open ({n:,} deliveries)", kept))
        print(summary(f"{where}: kept replies just after /new (none newer)", reset))
        print(summary(f"{where}: a chunk's origin", origin))
    finally:
        await store.close()


async def run(n: int, pg: bool, iterations: int) -> None:
    async with database(pg) as url:
        await measure(n, url, iterations)
    print(f"load average {os.getloadavg()[0]:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deliveries", type=int, default=100_000)
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--pg", action="store_true", help="the local PostgreSQL instead of SQLite")
    args = parser.parse_args()
    asyncio.run(run(args.deliveries, args.pg, args.iterations))


if __name__ == "__main__":
    main()
