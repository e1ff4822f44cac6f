"""The outbound gate's retry step on a fake clock: its waits are recorded, never slept (D142)."""

from __future__ import annotations

from core.runtime import Runtime
from tests.polling import eventually


class FakeHold:
    """Installed on `rt.gate.retry`: `slept` lists each wait, rounded to the millisecond."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.now = 100.0
        self.slept: list[float] = []
        rt.gate.retry.clock = self.clock
        rt.gate.retry.sleep = self.sleep

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(round(seconds, 3))
        self.now += seconds

    async def until_held(self, chat: str, timeout: float = 30) -> float:
        """The seconds `chat` (`channel|account|to`) is held for, once a 429 holds it."""

        async def held() -> float:
            return self.rt.gate.retry.held(chat)

        seconds: float = await eventually(held, timeout, f"{chat} is held")
        return seconds
