"""What the web chat race tests share (D190): a cron job that replies to the web chat, and the
adapter's step hook that holds a step until the test releases it."""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, field

from adapters.webchat.tabs import Step

AUTH = {"Authorization": "Bearer test-token"}
WS = "/ws?token=test-token"
CRON_REPLY = "echo: morning summary"
EXTRA = {
    "cron": {
        "jobs": [
            {
                "id": "morning",
                "every": "1h",
                "message": "morning summary",
                "deliver": {"channel": "webchat", "to": "owner"},
            }
        ]
    }
}


@dataclass
class Held:
    """One held step: `reached` is set when it is passed; it goes on once `released` is set."""

    reached: asyncio.Event = field(default_factory=asyncio.Event)
    released: asyncio.Event = field(default_factory=asyncio.Event)

    async def wait(self) -> None:
        await asyncio.wait_for(self.reached.wait(), 15)


class Steps:
    """The adapter's step hook (D190): holds the n-th pass of a step until the test releases it."""

    def __init__(self) -> None:
        self.passed: Counter[Step] = Counter()
        self.holds: dict[tuple[Step, int], Held] = {}

    def hold(self, step: Step, nth: int = 1) -> Held:
        return self.holds.setdefault((step, nth), Held())

    async def __call__(self, peer: str, step: Step) -> None:
        self.passed[step] += 1
        held = self.holds.get((step, self.passed[step]))
        if held is not None:
            held.reached.set()
            await held.released.wait()
