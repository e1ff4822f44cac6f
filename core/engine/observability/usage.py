"""Cost and turns over a time range, by day, agent, channel, session and model (D182).

The store adds the turns up in SQL per day, session and model
(`core.store.console.usage_cells`); this module folds those cells into the groups of
`GET /api/usage`: one turn is one run, its cost what the turn recorded when it
ended (`costUsd`, only where a price is known), its model the one that answered. Days are UTC
calendar days, every day of the range present (zeros included) so a chart has no gaps; the
turns of a session that no longer exists count for the agent its key names.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

from core.store.console import DAY_MS, UsageCell, UsageGroup

TOP_SESSIONS = 50


def day_of(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%d")


def range_start(now_ms: int, days: int) -> int:
    """Midnight UTC of the first of the `days` calendar days that end today."""
    return (now_ms // DAY_MS - (days - 1)) * DAY_MS


def wire(group: UsageGroup) -> dict[str, Any]:
    return {
        "key": group.key,
        "turns": group.turns,
        "pricedTurns": group.priced_turns,
        "costUsd": round(group.cost_usd, 6),
        "inputTokens": group.input_tokens,
        "outputTokens": group.output_tokens,
    }


def _sorted(groups: Iterable[UsageGroup]) -> list[dict[str, Any]]:
    return [wire(g) for g in sorted(groups, key=lambda g: (-g.cost_usd, -g.turns, g.key))]


def _agent_of(session_key: str) -> str:
    parts = session_key.split(":")
    return parts[1] if len(parts) > 2 and parts[0] == "agent" else "unknown"


Figures = list[float]
"""turns, priced turns, cost, input tokens, output tokens: added up in place (the fold runs once
per cell, and a busy month has tens of thousands of cells)."""


def _add(groups: dict[str, Figures], key: str, g: UsageGroup) -> None:
    f = groups.get(key)
    if f is None:
        groups[key] = [g.turns, g.priced_turns, g.cost_usd, g.input_tokens, g.output_tokens]
    else:
        _plus(f, g)


def _plus(f: Figures, g: UsageGroup) -> None:
    f[0] += g.turns
    f[1] += g.priced_turns
    f[2] += g.cost_usd
    f[3] += g.input_tokens
    f[4] += g.output_tokens


def _groups(figures: dict[str, Figures]) -> list[UsageGroup]:
    return [
        UsageGroup(k, int(f[0]), int(f[1]), f[2], int(f[3]), int(f[4])) for k, f in figures.items()
    ]


def usage_report(cells: Iterable[UsageCell], since: int, until: int) -> dict[str, Any]:
    """The `GET /api/usage` body for turns in [since, until)."""
    days: dict[str, Figures] = {day_of(ms): [0, 0, 0.0, 0, 0] for ms in range(since, until, DAY_MS)}
    total: Figures = [0, 0, 0.0, 0, 0]
    by: dict[str, dict[str, Figures]] = {"agent": {}, "channel": {}, "model": {}, "session": {}}
    day_names: dict[int, str] = {}
    for cell in cells:
        g = cell.figures
        _plus(total, g)
        day = day_names.get(cell.day) or day_names.setdefault(cell.day, day_of(cell.day * DAY_MS))
        _add(days, day, g)
        _add(by["agent"], cell.agent_id or _agent_of(cell.session_key), g)
        _add(by["channel"], cell.channel, g)
        _add(by["model"], cell.model or "none", g)
        _add(by["session"], cell.session_key, g)
    return {
        "ok": True,
        "since": since,
        "until": until,
        "totals": wire(_groups({"total": total})[0]),
        "byDay": [wire(g) for g in sorted(_groups(days), key=lambda g: g.key)],
        "byAgent": _sorted(_groups(by["agent"])),
        "byChannel": _sorted(_groups(by["channel"])),
        "byModel": _sorted(_groups(by["model"])),
        "bySession": _sorted(_groups(by["session"]))[:TOP_SESSIONS],
        "sessionsTotal": len(by["session"]),
    }
