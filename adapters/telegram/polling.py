"""Long polling that confirms an update only after Crosstalk has stored it (decision D16).

PTB's own updater confirms the offset past a batch on its next `getUpdates`, while the batch
still waits in its queue: a process killed in between loses those messages for good (Telegram
will not send them again). Here each update is routed (stored with its identities, or dropped as
a redelivery) before the offset moves past it, so a crash at any point means Telegram sends it
again and the router recognises it.
"""

from __future__ import annotations

import asyncio
import datetime as dtm
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from telegram import Bot, Update
from telegram.error import InvalidToken

log = logging.getLogger(__name__)

Route = Callable[[Update], Awaitable[None]]
CONFIRM_TIMEOUT = 2.0  # seconds the confirming call at stop may take
POISON_AFTER = 5  # a message that fails to route this often is logged and skipped


class ConfirmingPoller:
    """`getUpdates` in a loop; `route` must raise when an update could not be stored."""

    def __init__(
        self,
        bot: Bot,
        route: Route,
        *,
        timeout: float,
        read_timeout: float,
        allowed_updates: list[str],
        retry_initial: float,
        retry_max: float,
        on_error: Callable[[BaseException], None],
        on_fatal: Callable[[], None],
        name: str,
    ) -> None:
        self.bot, self.route, self.name = bot, route, name
        self.timeout, self.read_timeout = timeout, read_timeout
        self.allowed_updates = allowed_updates
        self.retry = (retry_initial, retry_max)
        self.on_error, self.on_fatal = on_error, on_fatal
        self.offset = 0
        self._confirmed = 0  # the offset the last getUpdates sent (Telegram forgot below it)
        self._task: asyncio.Task[None] | None = None
        self._failed: tuple[int, int] = (0, 0)  # (update id, failures): a poison update ends

    @property
    def task(self) -> asyncio.Task[None] | None:
        return self._task

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def start(self) -> None:
        if not self.running:
            self._task = asyncio.create_task(self._loop(), name=f"{self.name}-poll")

    async def stop(self) -> None:
        """Cancel the loop, the held request included (a hung poll ends here), then confirm
        what was routed since the last `getUpdates`: otherwise Telegram sends those updates
        again to the next poller, which would take a refused one for a new message."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        if self.offset > self._confirmed:
            try:  # one short call; a failure only means a redelivery the router recognises
                async with asyncio.timeout(CONFIRM_TIMEOUT):
                    await self.bot.get_updates(
                        offset=self.offset,
                        limit=1,
                        timeout=0,
                        read_timeout=CONFIRM_TIMEOUT,
                        allowed_updates=self.allowed_updates,
                    )
                self._confirmed = self.offset
            except Exception as exc:
                log.info(
                    "%s: could not confirm updates below %d at stop: %s",
                    self.name,
                    self.offset,
                    exc,
                )

    async def _loop(self) -> None:
        delay = self.retry[0]
        while True:
            try:
                asked = self.offset
                updates = await self.bot.get_updates(
                    offset=self.offset or None,
                    timeout=dtm.timedelta(seconds=self.timeout),
                    read_timeout=self.read_timeout,
                    allowed_updates=self.allowed_updates,
                )
                self._confirmed = max(self._confirmed, asked)
                for update in updates:
                    await self._route_one(update)  # stored (or dropped) before it is confirmed
                    self.offset = update.update_id + 1
                delay = self.retry[0]
            except asyncio.CancelledError:
                raise
            except InvalidToken:
                self.on_fatal()
                raise  # the task ends with it: the supervisor gives up (D35)
            except Exception as exc:  # network, 5xx, 409, a store failure: same offset again
                self.on_error(exc)
                await asyncio.sleep(delay)
                delay = min(delay * 2, self.retry[1])

    async def _route_one(self, update: Update) -> None:
        try:
            await self.route(update)
        except Exception:
            failed_id, count = self._failed
            count = count + 1 if failed_id == update.update_id else 1
            self._failed = (update.update_id, count)
            if count < POISON_AFTER:
                raise
            log.exception(
                "%s: update %s failed %d times; skipping it", self.name, update.update_id, count
            )

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        info: dict[str, Any] = {"offset": self.offset, "running": self.running}
        return f"ConfirmingPoller({self.name}, {info})"
