"""The usage lines of `/status`: which model answered the last run and what it cost."""

from __future__ import annotations

from core.api.sessions import RunRecord, SessionEntry


def usd(value: float) -> str:
    return f"${value:.4f}" if value < 1 else f"${value:.2f}"


def usage_lines(entry: SessionEntry, last: RunRecord | None) -> list[str]:
    meta = (last.meta or {}) if last else {}
    lines = []
    if meta.get("model"):
        lines.append(f"Answered by: {meta['model']}")
    run_cost = meta.get("costUsd")
    if entry.cost_usd is not None:
        lines.append(
            f"Cost: {usd(entry.cost_usd)} this session"
            + (f" (last run {usd(float(run_cost))})" if run_cost is not None else "")
        )
    return lines
