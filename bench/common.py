"""Shared helpers for the benchmarks (they print figures; they never assert timings)."""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path
from typing import Any

from core.config import CrosstalkConfig, validate_config


def temp_config(extra: dict[str, Any] | None = None, db_url: str | None = None) -> CrosstalkConfig:
    state = Path(tempfile.mkdtemp(prefix="crosstalk-bench-"))
    raw: dict[str, Any] = {
        "gateway": {"stateDir": str(state), "auth": {"token": "bench"}},
        "models": {"providers": {"fake": {"baseUrl": "http://127.0.0.1:9/v1", "apiKey": "x"}}},
        "agents": {"defaults": {"model": "fake/instant"}},
    }
    if db_url:
        raw["gateway"]["database"] = {"url": db_url}
    raw.update(extra or {})
    return validate_config(raw)


def summary(name: str, samples_ms: list[float]) -> str:
    s = sorted(samples_ms)
    p95 = s[min(len(s) - 1, int(len(s) * 0.95))]
    return (
        f"{name}: n={len(s)} mean={statistics.fmean(s):.2f} ms "
        f"p50={statistics.median(s):.2f} ms p95={p95:.2f} ms"
    )
