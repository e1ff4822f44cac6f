"""The scheduler's notion of "now": injectable, so schedule tests never sleep."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time, timezone-aware."""
        ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


def to_ms(dt: datetime) -> int:
    return int(dt.timestamp() * 1000)


def from_ms(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


def iso(ms: int | None) -> str:
    """A stored millisecond time for people (`-` when unset)."""
    return from_ms(ms).isoformat() if ms is not None else "-"
