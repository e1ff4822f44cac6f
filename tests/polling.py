"""Deadline-bounded polling for state that offers no event to await (store rows, files)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from core.runtime import Runtime

T = TypeVar("T")


async def eventually(
    check: Callable[[], Awaitable[T | None]], timeout: float = 10.0, what: str = "condition"
) -> T:
    """Re-run `check` until it returns something truthy (and return it), or fail at the deadline."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        result = await check()
        if result:
            return result
        if loop.time() > deadline:
            raise AssertionError(f"{what} not met within {timeout}s (last: {result!r})")
        await asyncio.sleep(0.02)


async def user_texts(rt: Runtime, key: str) -> list[str]:
    """The user messages stored in a session's current transcript."""
    entry = await rt.store.get_session(key)
    if entry is None:
        return []
    return [m.plain_text() for m in await rt.store.history(entry.session_id) if m.role == "user"]
