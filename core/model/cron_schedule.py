"""When a job fires: a 5-field cron expression (cronsim), `every: <duration>` or `at: <ISO-8601>`.

The cron grammar is cronsim's (Debian cron semantics, DST-aware in the job's `tz`); only the
duration syntax of `every` (`90s`, `10m`, `1h30m`, `2d`) is parsed here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError

_DURATION = re.compile(r"(\d+)\s*([smhd])")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
MAX_EVERY_DAYS = 3660
"""The longest `every` (about ten years): longer ones overflow date arithmetic (D81's holes)."""
_LATEST = datetime(9000, 1, 1, tzinfo=UTC)


def parse_tz(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"unknown time zone: {name!r}") from exc


def parse_every(text: str) -> timedelta:
    """`10m`, `1h30m`, `45s`, `2d` → a positive duration."""
    raw = text.strip().lower().replace(" ", "")
    parts = _DURATION.findall(raw)
    if not raw or "".join(n + u for n, u in parts) != raw:
        raise ValueError(f"invalid every: {text!r} (use e.g. 30s, 10m, 1h30m, 1d)")
    if any(len(n) > 12 for n, _ in parts):
        raise ValueError(f"invalid every: {text!r} (at most {MAX_EVERY_DAYS}d)")
    seconds = sum(int(n) * _UNITS[u] for n, u in parts)
    if seconds < 1:
        raise ValueError(f"invalid every: {text!r} (must be at least 1s)")
    if seconds > MAX_EVERY_DAYS * 86400:
        raise ValueError(f"invalid every: {text!r} (at most {MAX_EVERY_DAYS}d)")
    return timedelta(seconds=seconds)


def check_cron(expr: str) -> str:
    expr = " ".join(expr.split())
    if len(expr.split(" ")) != 5:
        raise ValueError(f"invalid schedule: {expr!r} (expected 5 fields: min hour dom mon dow)")
    try:
        CronSim(expr, datetime(2000, 1, 1, tzinfo=UTC))
    except CronSimError as exc:
        raise ValueError(f"invalid schedule: {expr!r} ({exc})") from exc
    return expr


SCAN_FIRINGS = 1_500
SCAN_DAYS = 400


def fires_within(expr: str, seconds: float) -> bool:
    """Whether two firings of a cron expression ever come closer than `seconds`: its firings
    over a year and a month are scanned (at most :data:`SCAN_FIRINGS`, which is more than a
    day of the densest expression, so every gap of its daily pattern), in UTC. A minute is the
    finest a cron expression can be, so a bound of 60 s or less needs no scan."""
    if seconds <= 60:
        return False
    start = datetime(2025, 1, 1, tzinfo=UTC)
    end = start + timedelta(days=SCAN_DAYS)
    firings = CronSim(check_cron(expr), start)
    prev = next(firings, None)
    for _, when in zip(range(SCAN_FIRINGS), firings, strict=False):
        if prev is not None and (when - prev).total_seconds() < seconds:
            return True
        if when > end:
            break
        prev = when
    return False


def parse_at(text: str, tz: ZoneInfo | None) -> datetime:
    """ISO-8601; a time without an offset is read in `tz` (UTC when none)."""
    try:
        dt = datetime.fromisoformat(text.strip())
    except ValueError as exc:
        raise ValueError(
            f"invalid at: {text!r} (expected ISO-8601, e.g. 2026-12-01T09:00:00+01:00)"
        ) from exc
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=tz or UTC)
    try:
        out = dt.astimezone(UTC)
    except OverflowError as exc:
        raise ValueError(f"invalid at: {text!r} (out of range)") from exc
    if out >= _LATEST:
        raise ValueError(f"invalid at: {text!r} (must be before 9000-01-01)")
    return out


@dataclass(frozen=True, slots=True)
class Schedule:
    kind: Literal["cron", "every", "at"]
    cron: str | None = None
    tz: ZoneInfo | None = None
    every: timedelta | None = None
    at: datetime | None = None

    @classmethod
    def of(
        cls, *, schedule: str | None, every: str | None, at: str | None, tz: str | None
    ) -> Schedule:
        """Validate one of the three forms (exactly one must be given)."""
        given = [n for n, v in (("schedule", schedule), ("every", every), ("at", at)) if v]
        if len(given) != 1:
            raise ValueError(
                "exactly one of schedule, every or at is required"
                + (f" (got {', '.join(given)})" if given else "")
            )
        zone = parse_tz(tz) if tz else None
        if schedule:
            return cls("cron", cron=check_cron(schedule), tz=zone)
        if tz is not None and every:
            raise ValueError("tz applies to schedule and at, not every")
        if every:
            return cls("every", every=parse_every(every))
        assert at is not None
        return cls("at", at=parse_at(at, zone), tz=zone)

    def first_run(self, now: datetime) -> datetime:
        """When a newly added (or re-enabled) job fires first."""
        if self.at is not None:
            return self.at
        return self.next_after(now)

    def next_after(self, now: datetime) -> datetime:
        """The next firing strictly after `now` (for `at`: the instant itself)."""
        if self.cron is not None:
            local = now.astimezone(self.tz or UTC)
            return next(CronSim(self.cron, local)).astimezone(UTC)
        if self.every is not None:
            return now + self.every
        assert self.at is not None
        return self.at
