"""What the web chat reads of the delivery log (D136): the cron and webhook replies it was sent,
read each time a tab opens (also just after `/new`, when none is newer than the reset and the
older ones of the chat are read and left out), and a chunk's origin, read for each chunk sent to
the web chat.

The log holds `--deliveries` rows (default 100,000): one in 100 a cron reply to the web chat,
a third of the rest replies to the web chat, the others Telegram replies. Each has a text chunk;
every other cron reply also sends an image (a media chunk and its stored item), which the history
row of a kept reply carries (D192).

    .venv/bin/python -m bench.bench_webchat_kept [--deliveries 100000] [--pg]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from typing import Any

from sqlalchemy import insert, text

from bench.bench_sessions_list_scale import database
from bench.common import summary, temp_config
from core.store import Store
from core.store.ledger_tables import DeliveryChunkRow
from core.store.media_tables import MediaRow
from core.store.tables import DeliveryRow

PNG = b"\x89PNG\r\n\x1a\n" + bytes(2_000)


def rows(n: int) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        cron = i % 100 == 0
        out.append(
            {
                "id": i + 1,
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


def chunks(deliveries: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A text chunk per delivery, and an image chunk (with its item) for every other cron reply."""
    out, media = [], []
    for d in deliveries:
        chunk = {"delivery_id": d["id"], "state": "sent", "updated_at": d["created_at"]}
        out.append(chunk | {"chunk_index": 0, "text": d["text"], "media_id": None})
        if d["kind"] == "cron" and d["id"] % 200 == 1:
            media_id = f"m{d['id']}"
            text = f"[image: chart-{d['id']}.png, 2.0 KB]"
            out.append(chunk | {"chunk_index": 1, "text": text, "media_id": media_id})
            media.append(
                {
                    "id": media_id,
                    "name": f"chart-{d['id']}.png",
                    "mime": "image/png",
                    "size": len(PNG),
                    "data": PNG,
                    "created_at": d["created_at"],
                }
            )
    return out, media


async def measure(n: int, url: str | None, iterations: int) -> None:
    config = temp_config(db_url=url)
    state = config.resolve_state_dir()
    store = Store(url or f"sqlite+aiosqlite:///{state}/crosstalk.db", state)
    await store.open()
    try:
        table = DeliveryRow.__table__  # type: ignore[attr-defined]
        data = rows(n)
        chunk_rows, media_rows = chunks(data)
        chunk_table = DeliveryChunkRow.__table__  # type: ignore[attr-defined]
        media_table = MediaRow.__table__  # type: ignore[attr-defined]
        await store.write(lambda c: c.execute(insert(table), data))
        await store.write(lambda c: c.execute(insert(chunk_table), chunk_rows))
        await store.write(lambda c: c.execute(insert(media_table), media_rows))
        if url:  # statistics, as autovacuum gathers them on a live database: a fresh table
            await store.write(lambda c: c.execute(text("ANALYZE")))  # has none (scanned whole)
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
