"""Limits (D64): messages, turns and cost per person, agent and session, counted in the store.

Message and turn limits are checked when a message that would start a run arrives; cost limits
before every model request of a turn (:meth:`Limits.cost_gate`, called by the model wrapper), so
a long tool loop stops at its next request. Days and months are UTC. A refusal goes out through
the gate once per window and sender; the clock is injectable for tests.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from core.engine.observability.metrics import DISCARD, Metrics
from core.store import now_ms

if TYPE_CHECKING:
    from core.config import CrosstalkConfig
    from core.config.schema import LimitSet
    from core.store import Store

LimitName = Literal["messages per minute", "turns per day", "cost per day", "cost per month"]
ORDER: tuple[tuple[LimitName, str, str], ...] = (
    ("messages per minute", "messages_per_minute", "messages"),
    ("turns per day", "turns_per_day", "turns"),
    ("cost per day", "cost_usd_per_day", "cost"),
    ("cost per month", "cost_usd_per_month", "cost"),
)


@dataclass(frozen=True, slots=True)
class Subject:
    """One thing limits count: `scope` (person, agent, session), its counter key, its limits."""

    scope: str
    key: str
    limits: LimitSet


@dataclass(frozen=True, slots=True)
class Refusal:
    scope: str
    limit: LimitName
    used: float
    max: float
    resets: str
    announce: bool = True
    """False when this window's refusal was already sent to the sender."""

    def text(self) -> str:
        return f"⏳ Limit reached: {self.limit} ({self.used_text}). It resets at {self.resets}."

    @property
    def used_text(self) -> str:
        return fmt(self.limit, self.used, self.max)


def fmt(limit: str, used: float, cap: float) -> str:
    if limit.startswith("cost"):
        return f"${used:.2f}/${cap:.2f}"
    return f"{int(used)}/{int(cap)}"


def windows(ms: int) -> dict[LimitName, tuple[str, str]]:
    """Each limit's window id at `ms` and when it resets (`HH:MM UTC`, the month with its date)."""
    t = dt.datetime.fromtimestamp(ms / 1000, dt.UTC)
    minute = ms // 60_000
    next_minute = dt.datetime.fromtimestamp((minute + 1) * 60, dt.UTC)
    first = (t.replace(day=1) + dt.timedelta(days=32)).replace(day=1)
    return {
        "messages per minute": (f"m:{minute}", f"{next_minute:%H:%M} UTC"),
        "turns per day": (f"d:{t:%Y-%m-%d}", "00:00 UTC"),
        "cost per day": (f"d:{t:%Y-%m-%d}", "00:00 UTC"),
        "cost per month": (f"mo:{t:%Y-%m}", f"00:00 UTC on {first:%Y-%m-%d}"),
    }


class Limits:
    def __init__(
        self,
        config: CrosstalkConfig,
        store: Store,
        *,
        metrics: Metrics = DISCARD,
        clock: Callable[[], int] = now_ms,
    ) -> None:
        self.config = config
        self.store = store
        self.metrics = metrics
        self.clock = clock

    def subjects(
        self, role: str, who: str | None, agent_id: str, session_key: str
    ) -> list[Subject]:
        """Person (its `person:` or `sender:` key; none for callers with no sender), agent,
        session; only those with a limit set."""
        cfg = self.config.limits
        out = []
        if who is not None:
            out.append(Subject("person", who, cfg.for_role(role)))
        if agent_id in cfg.per_agent:
            out.append(Subject("agent", f"agent:{agent_id}", cfg.per_agent[agent_id]))
        if cfg.per_session is not None:
            out.append(Subject("session", f"session:{session_key}", cfg.per_session))
        return [s for s in out if not s.limits.is_empty()]

    async def on_arrival(self, subjects: list[Subject], who: str | None) -> Refusal | None:
        """Count a message that would start a turn; the refusal when a limit says no (the
        message and turn are then not counted)."""
        w = windows(self.clock())
        bumps: list[tuple[str, str, str, float]] = []
        checks: list[tuple[Subject, LimitName, float]] = []
        for s in subjects:
            for name, field, kind in ORDER[:2]:
                cap = getattr(s.limits, field)
                if cap is not None:
                    bumps.append((s.key, w[name][0], kind, 1.0))
                    checks.append((s, name, float(cap)))
        if bumps:
            values = await self.store.bump(bumps)
            for (s, name, cap), value in zip(checks, values, strict=True):
                if value > cap:
                    await self.store.bump([(k, win, kind, -1.0) for k, win, kind, _ in bumps])
                    refusal = Refusal(s.scope, name, value - 1, cap, w[name][1])
                    return await self._refused(refusal, who)
        cost = await self._cost_check(subjects, w)
        return None if cost is None else await self._refused(cost, who)

    async def on_api_arrival(self, agent_id: str, session_key: str) -> Refusal | None:
        """A turn asked for with the gateway token (`/v1/chat/completions`, a webhook): no
        person, so only the agent's and session's limits, counted like a chat message (D102)."""
        subjects = self.subjects("owner", None, agent_id, session_key)
        return await self.on_arrival(subjects, None) if subjects else None

    async def before_request(self, subjects: list[Subject], who: str | None) -> Refusal | None:
        """The cost limits before a model request (D64)."""
        refusal = await self._cost_check(subjects, windows(self.clock()))
        return None if refusal is None else await self._refused(refusal, who)

    async def add_cost(self, subjects: list[Subject], usd: float) -> None:
        """Count a response's price where a cost limit is set."""
        w = windows(self.clock())
        bumps = [
            (s.key, w[name][0], "cost", usd)
            for s in subjects
            for name, field, _ in ORDER[2:]
            if getattr(s.limits, field) is not None
        ]
        if bumps:
            await self.store.bump(bumps)

    async def usage_lines(self, subjects: list[Subject]) -> list[str]:
        """`<limit>: <used>/<max>` for each limit set on the sender's subjects (`/usage`)."""
        w = windows(self.clock())
        rows = [
            (name, s.key, w[name][0], kind, float(getattr(s.limits, field)))
            for s in subjects
            for name, field, kind in ORDER
            if getattr(s.limits, field) is not None
        ]
        values = await self.store.counters([(k, win, kind) for _, k, win, kind, _ in rows])
        return [
            f"{name}: {fmt(name, v, cap)}" for (name, *_, cap), v in zip(rows, values, strict=True)
        ]

    async def _cost_check(
        self, subjects: list[Subject], w: dict[LimitName, tuple[str, str]]
    ) -> Refusal | None:
        rows = [
            (s, name, float(getattr(s.limits, field)))
            for s in subjects
            for name, field, _ in ORDER[2:]
            if getattr(s.limits, field) is not None
        ]
        if not rows:
            return None
        values = await self.store.counters([(s.key, w[name][0], "cost") for s, name, _ in rows])
        for (s, name, cap), used in zip(rows, values, strict=True):
            if used >= cap:
                return Refusal(s.scope, name, used, cap, w[name][1])
        return None

    async def _refused(self, refusal: Refusal, who: str | None) -> Refusal:
        """Count it; `resets` is emptied when this window's refusal was already sent."""
        self.metrics.limit_refusal(refusal.scope, refusal.limit)
        if who is None:
            return refusal
        window = windows(self.clock())[refusal.limit][0]
        [sent] = await self.store.bump([(who, window, f"refused:{refusal.limit}", 1.0)])
        return replace(refusal, announce=sent == 1)


def person_key(sender: str | None, person_id: str | None) -> str | None:
    """The counter key of the requester: its linked person (counted once, D65), else its
    platform account; None for callers without one (HTTP, cron)."""
    if person_id:
        return f"person:{person_id}"
    return f"sender:{sender}" if sender else None


__all__ = ["Limits", "Refusal", "Subject", "person_key", "windows"]
