"""Per-session limit on how fast agents add cron jobs (misuse bound, like D8's send rate)."""

from __future__ import annotations

import time
from collections import deque


class AddLimiter:
    """At most `per_minute` adds from one session in any rolling minute."""

    def __init__(self) -> None:
        self._events: dict[str, deque[float]] = {}

    def check(self, key: str, per_minute: int, now: float | None = None) -> str | None:
        if per_minute <= 0:
            return None
        t = time.monotonic() if now is None else now
        window = self._events.setdefault(key, deque())
        while window and t - window[0] >= 60.0:
            window.popleft()
        if len(window) >= per_minute:
            return f"rate limited: at most {per_minute} cron jobs added per minute per session"
        window.append(t)
        return None
