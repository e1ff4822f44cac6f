"""The sink an adapter under test delivers to: it records the messages, and a test waits for
them with a deadline (`next`, `wait`) or makes one delivery fail once (`fail_on`)."""

from __future__ import annotations

import asyncio

from core.model.inbound import InboundMessage


class Inbox:
    def __init__(self, fail_on: str | None = None) -> None:
        self.messages: list[InboundMessage] = []
        self.fail_on = fail_on
        self._queue: asyncio.Queue[InboundMessage] = asyncio.Queue()
        self._changed = asyncio.Event()

    async def __call__(self, msg: InboundMessage) -> None:
        if self.fail_on is not None and msg.text == self.fail_on:
            self.fail_on = None  # fails once, like a store that is briefly unavailable
            raise RuntimeError("store unavailable")
        self.messages.append(msg)
        self._queue.put_nowait(msg)
        self._changed.set()

    def texts(self) -> list[str]:
        return [m.text for m in self.messages]

    async def next(self, timeout: float = 5.0) -> InboundMessage:
        """The next message not yet taken, in the order they came."""
        return await asyncio.wait_for(self._queue.get(), timeout)

    async def wait(self, count: int = 1, within: float = 5.0) -> list[InboundMessage]:
        """All messages, once there are at least `count`."""
        async with asyncio.timeout(within):
            while len(self.messages) < count:
                self._changed.clear()
                await self._changed.wait()
        return self.messages
