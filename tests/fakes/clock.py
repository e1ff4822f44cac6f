"""A manual clock for scheduling tests: time moves only when the test says so."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


class ManualClock:
    def __init__(self, start: datetime | None = None) -> None:
        self.current = start or datetime(2026, 11, 23, 8, 0, tzinfo=UTC)

    def now(self) -> datetime:
        return self.current

    def advance(self, **delta: float) -> datetime:
        self.current += timedelta(**delta)
        return self.current

    def set(self, when: datetime) -> None:
        self.current = when
