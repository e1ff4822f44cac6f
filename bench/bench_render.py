"""Markdown rendering + format-aware chunking per platform (prints figures, asserts nothing).

Input: the golden reply (headings, lists, a quote, code, a table, emoji) repeated to about
2 KB and 20 KB, i.e. one ordinary reply and one that needs several chunks.

    .venv/bin/python -m bench.bench_render
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from adapters.discord.render import render_chunks as discord_chunks
from adapters.slack.render import render_chunks as slack_chunks
from adapters.telegram.render import render_chunks as telegram_chunks
from bench.common import summary

SOURCE = (
    Path(__file__).resolve().parents[1] / "tests" / "adapters" / "golden" / "reply.md"
).read_text(encoding="utf-8")
PLATFORMS: dict[str, Callable[[str], list[object]]] = {
    "telegram": telegram_chunks,  # type: ignore[dict-item]
    "slack": slack_chunks,  # type: ignore[dict-item]
    "discord": discord_chunks,  # type: ignore[dict-item]
}


def main() -> None:
    for size in (2_000, 20_000):
        md = "\n\n".join([SOURCE] * max(1, size // len(SOURCE)))
        for name, fn in PLATFORMS.items():
            fn(md)  # warm up imports and caches
            samples = []
            for _ in range(30):
                t0 = time.perf_counter()
                chunks = fn(md)
                samples.append((time.perf_counter() - t0) * 1000)
            print(summary(f"{name} {len(md)} chars -> {len(chunks)} chunk(s)", samples))


if __name__ == "__main__":
    main()
