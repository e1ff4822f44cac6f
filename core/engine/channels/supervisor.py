"""One connection supervisor for every channel adapter (D35).

An adapter describes its connection as a :class:`Connection` (prepare what sending needs, open
the receiving side, wait for it to end, close it, classify an error as fatal); the supervisor
keeps it up: capped exponential backoff (`retry_initial` doubling up to `retry_max`), fatal
errors (a rejected token) stop it in state ``failed``, and — when a lease is given — the
receiving side runs only while this process holds the lease ``channel:<channel>:<account>``
(D36). Without the lease the adapter is in ``standby``: prepared, so replies still go out
through the platform's REST API, but another process receives. The lease is renewed every
ttl/3; a failed renewal closes the receiving side at once, so two processes never receive at
the same time, and a survivor takes over within the lease time when the holder dies.

Clock and sleep are injectable so tests move time instead of waiting.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from core.engine.background import cancel_and_wait
from core.model.channel import AdapterState, ChannelLease
from core.model.errors import ChannelUnavailable

log = logging.getLogger(__name__)

Sleep = Callable[[float], Awaitable[None]]


class Connection(Protocol):
    """One adapter's platform connection, as the supervisor drives it."""

    async def prepare(self) -> None:
        """Log in / check credentials: what sending needs. Idempotent; run every attempt."""

    async def open(self) -> None:
        """Start receiving; returns once established (raises when it could not)."""

    async def wait_closed(self) -> None:
        """Return (or raise) when the receiving side has ended by itself."""

    async def close(self) -> None:
        """Stop receiving; idempotent. Sending keeps working where the platform allows."""

    def fatal_reason(self, exc: BaseException) -> str | None:
        """Why `exc` cannot be fixed by retrying (bad token, bad intents), else None."""


class SoleProcessLease:
    """SQLite: one process owns the database, so it holds every connection lease (D36), at
    once after a crash too, instead of waiting out its dead predecessor's lease."""

    def __init__(self, holder: str, ttl_ms: int = 30_000) -> None:
        self.holder, self.ttl_ms = holder, ttl_ms

    async def acquire(self, name: str) -> bool:
        return True

    async def release(self, name: str) -> None:
        return None

    async def holder_of(self, name: str) -> str | None:
        return self.holder


@dataclass(frozen=True, slots=True)
class Backoff:
    """Capped exponential backoff; the same knob names for every channel."""

    retry_initial: float = 1.0
    retry_max: float = 60.0

    def after(self, delay: float) -> float:
        return min(delay * 2, self.retry_max)


def describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class ConnectionSupervisor:
    """Keeps one :class:`Connection` up; its state is the adapter's state."""

    def __init__(
        self,
        label: str,
        conn: Connection,
        *,
        backoff: Backoff | None = None,
        lease: ChannelLease | None = None,
        lease_name: str = "",
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.label = label
        self.conn = conn
        self.backoff = backoff or Backoff()
        self.lease = lease
        self.lease_name = lease_name
        self._sleep = sleep
        self.state: AdapterState = "stopped"
        self.detail: str | None = None
        self.holder: str | None = None
        """The process that holds the receiving connection (None without a lease)."""
        self.receiving = False
        self._opening = False
        self._watch: asyncio.Task[None] | None = None
        self._task: asyncio.Task[None] | None = None
        self._delay = self.backoff.retry_initial

    # ---- public -----------------------------------------------------------------------------

    @property
    def renew_every(self) -> float | None:
        return None if self.lease is None else self.lease.ttl_ms / 3000

    @property
    def retry_every(self) -> float | None:
        """How often a standby asks for the lease: a sixth of the lease time (D36)."""
        return None if self.lease is None else self.lease.ttl_ms / 6000

    async def start(self) -> None:
        """First attempt inline (a fatal error raises ChannelUnavailable); then supervise in
        the background: transient errors never block the start."""
        if self._task is not None:
            return
        self._delay = self.backoff.retry_initial
        self._set("starting")
        error: Exception | None = None
        try:
            await self._step()
        except Exception as exc:
            error = exc
            reason = self.conn.fatal_reason(exc)
            if reason is not None:
                await self._fail(reason)
                raise ChannelUnavailable(f"{self.label}: {reason}") from None
            self._retrying(exc)
            log.warning(
                "%s: connect failed (%s); retrying in the background", self.label, describe(exc)
            )
        self._task = asyncio.create_task(self._run(error is not None), name=self.label)

    async def stop(self) -> None:
        """Close the connection and give the lease up, so a standby takes over at once."""
        task, self._task = self._task, None
        await cancel_and_wait(task)
        await self._close_receiving()
        if self.lease is not None:
            try:
                await self.lease.release(self.lease_name)
            except Exception as exc:  # the store is closing: the lease simply expires
                log.warning("%s: could not release the lease (%s)", self.label, describe(exc))
        if self.state != "failed":
            self._set("stopped")

    async def restart(self, reason: str) -> None:
        """The watchdog saw silence: close the receiving side and open it again now.

        The background loop is paused meanwhile: it would see the closed side end and open it
        a second time, concurrently with this open (D165). An open that fails here is retried
        by the loop with backoff, like any dropped connection."""
        task = self._task
        if not self.receiving or task is None:
            return
        log.warning("%s: %s; reconnecting", self.label, reason)
        self._task = None
        await cancel_and_wait(task)
        await self._close_receiving()
        retry = False
        try:
            await self._open_receiving()
        except Exception as exc:
            fatal = self.conn.fatal_reason(exc)
            if fatal is not None:
                await self._fail(fatal)
                return
            self._retrying(exc)
            retry = True
        self._task = asyncio.create_task(self._run(retry), name=self.label)

    def note(self, state: AdapterState, detail: str | None = None) -> None:
        """A finer report from the receiving side (a failed poll, a resumed socket); only
        while it runs, so it never hides standby, failed or a pending reconnect."""
        if (self.receiving or self._opening) and self.state in (
            "connected",
            "retrying",
            "starting",
        ):
            self._set(state, detail)

    # ---- the loop ---------------------------------------------------------------------------

    async def _run(self, retry: bool) -> None:
        while True:
            try:
                if retry:
                    await self._sleep(self._delay)
                    self._delay = self.backoff.after(self._delay)
                    retry = False
                    await self._step()
                ended = await self._hold_for(
                    self.renew_every if self.receiving else self.retry_every
                )
                if ended is not None:
                    raise ended
                await self._step()  # renew the lease (or take it over from a dead holder)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                reason = self.conn.fatal_reason(exc)
                if reason is not None:
                    await self._fail(reason)
                    return
                await self._close_receiving()
                self._retrying(exc)
                log.warning("%s: %s", self.label, self.detail)
                retry = True

    async def _step(self) -> None:
        """Prepare, take or renew the lease, and receive while it is held."""
        await self.conn.prepare()
        if self.lease is not None:
            try:
                # a renewal slower than its period must not let us receive past the lease
                async with asyncio.timeout(self.renew_every):
                    held = await self.lease.acquire(self.lease_name)
            except Exception:
                await self._close_receiving()  # cannot prove we hold it: stop receiving
                raise
            if not held:
                if self.receiving:  # lost it: closing may have closed the sending side too
                    await self._close_receiving()
                    await self.conn.prepare()
                self.holder = await self.lease.holder_of(self.lease_name)
                self._set("standby", f"held by {self.holder}" if self.holder else None)
                return
            self.holder = self.lease.holder
        if not self.receiving:
            await self._open_receiving()
        elif self.state == "standby" or self.state == "starting":
            self._set("connected")

    async def _open_receiving(self) -> None:
        self._opening = True
        try:
            await self.conn.open()
        except BaseException:
            await self._close_receiving()
            raise
        finally:
            self._opening = False
        self.receiving = True
        self._watch = asyncio.create_task(self.conn.wait_closed(), name=f"{self.label}-watch")
        self._set("connected")
        self._delay = self.backoff.retry_initial
        log.info("%s connected", self.label)

    async def _hold_for(self, seconds: float | None) -> BaseException | None:
        """Wait `seconds` (forever when None) or until the receiving side ends by itself;
        returns the error it ended with (a clean end is an error too: it should not end)."""
        watch = self._watch
        waits: set[asyncio.Future[None]] = set()
        timer: asyncio.Future[None] | None = None
        if seconds is not None:
            timer = asyncio.ensure_future(self._sleep(seconds))
            waits.add(timer)
        if watch is not None and self.receiving:
            waits.add(watch)
        if not waits:
            await asyncio.Event().wait()  # nothing to watch: parked until cancelled
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if timer is not None:
                timer.cancel()
        if watch is None or not watch.done() or watch is not self._watch:
            return None
        self._watch = None  # still `receiving`: the caller closes what is left of it
        if watch.cancelled():
            return ConnectionError("connection closed")
        return watch.exception() or ConnectionError("connection closed")

    async def _close_receiving(self) -> None:
        watch, self._watch = self._watch, None
        was = self.receiving
        self.receiving = False
        if watch is not None:
            watch.cancel()
            await asyncio.gather(watch, return_exceptions=True)
        if was or watch is not None:
            try:
                await self.conn.close()
            except Exception:
                log.exception("%s: error while closing", self.label)

    async def _fail(self, reason: str) -> None:
        await self._close_receiving()
        self._set("failed", reason)
        log.error("%s: %s; giving up", self.label, reason)

    def _retrying(self, exc: BaseException) -> None:
        self._set("retrying", f"{describe(exc)}; retrying in {self._delay:g}s")

    def _set(self, state: AdapterState, detail: str | None = None) -> None:
        self.state, self.detail = state, detail
