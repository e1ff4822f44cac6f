"""The gate's retry step (D99, D142): what a platform fault or a rate limit does to a send.

A rate limit (429) holds the chat for the time the platform asked, whichever send met it (a
chunk, an edit, a preview): every send to that chat waits out the hold first, and previews
and typing are skipped while it lasts, so a `retry_after: 1` is never answered 9 ms later. A
fault that may pass (`ChannelUnavailable`: a 5xx, a timeout, a dropped connection, on every
platform) is retried after an exponential backoff. Both are bounded (`max_retries`, waits of
at most `max_retry_wait`); then the error is raised, and the gate logs the delivery `failed`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from core.model.delivery_context import DeliveryContext
from core.model.errors import ChannelUnavailable, RateLimited

T = TypeVar("T")


def chat_key(target: DeliveryContext | None) -> str | None:
    """The chat a rate limit holds (Telegram's and Discord's limits are per chat)."""
    if target is None or not target.channel or not target.to:
        return None
    return f"{target.channel}|{target.account_id or ''}|{target.to}"


class SendRetry:
    def __init__(
        self,
        *,
        max_retries: int = 3,
        max_retry_wait: float = 30.0,
        backoff: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_retries = max_retries
        self.max_retry_wait = max_retry_wait
        self.backoff = backoff
        """The first wait after a fault that may pass; doubled for each next one."""
        self.clock = clock
        self.sleep: Callable[[float], Awaitable[None]] = asyncio.sleep  # tests inject theirs
        self._holds: dict[str, float] = {}

    def hold(self, key: str | None, seconds: float) -> None:
        """The platform asked for `seconds` of quiet in this chat."""
        if key is None:
            return
        until = self.clock() + min(max(seconds, 0.0), self.max_retry_wait)
        self._holds[key] = max(until, self._holds.get(key, 0.0))
        if len(self._holds) > 10_000:  # long-gone holds are dropped, the map stays small
            now = self.clock()
            self._holds = {k: v for k, v in self._holds.items() if v > now}

    def held(self, key: str | None) -> float:
        """Seconds this chat is still held (0: free)."""
        if key is None or key not in self._holds:
            return 0.0
        left = self._holds[key] - self.clock()
        if left <= 0:
            del self._holds[key]
            return 0.0
        return left

    async def wait(self, key: str | None) -> None:
        left = self.held(key)
        if left > 0:
            await self.sleep(left)

    async def run(self, send: Callable[[], Awaitable[T]], key: str | None = None) -> T:
        """`send`, again after a rate limit (waiting what the platform asked) or a fault that
        may pass (waiting `backoff`, 2×, 4×…), at most `max_retries` more times."""
        tries = 0
        while True:
            tries += 1
            await self.wait(key)
            try:
                return await send()
            except RateLimited as exc:
                if tries > self.max_retries:
                    raise
                self.hold(key, exc.retry_after)
                if key is None:
                    await self.sleep(min(max(exc.retry_after, 0.0), self.max_retry_wait))
            except ChannelUnavailable:
                if tries > self.max_retries:
                    raise
                await self.sleep(min(self.backoff * 2 ** (tries - 1), self.max_retry_wait))
