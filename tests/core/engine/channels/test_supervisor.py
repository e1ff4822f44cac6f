"""The shared connection supervisor (D35, D36) with an injected sleeper: time moves only when
the test releases a sleep, and every wait the supervisor asks for is recorded."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from core.engine.channels.supervisor import Backoff, ConnectionSupervisor
from core.model.errors import ChannelUnavailable


class Fatal(Exception):
    pass


class FakeConn:
    """A connection whose failures are scripted; `drop()` ends the receiving side."""

    def __init__(self) -> None:
        self.prepare_errors: list[Exception] = []
        self.open_errors: list[Exception] = []
        self.opened = 0
        self.closed = 0
        self._ended: asyncio.Future[None] | None = None

    async def prepare(self) -> None:
        if self.prepare_errors:
            raise self.prepare_errors.pop(0)

    async def open(self) -> None:
        if self.open_errors:
            raise self.open_errors.pop(0)
        self.opened += 1
        self._ended = asyncio.get_running_loop().create_future()

    async def wait_closed(self) -> None:
        assert self._ended is not None
        await self._ended

    async def close(self) -> None:
        self.closed += 1

    def fatal_reason(self, exc: BaseException) -> str | None:
        return "token rejected" if isinstance(exc, Fatal) else None

    def drop(self, error: Exception | None = None) -> None:
        assert self._ended is not None
        if error is None:
            self._ended.set_result(None)
        else:
            self._ended.set_exception(error)


class Sleeper:
    """Every sleep waits until the test releases it."""

    def __init__(self) -> None:
        self.asked: list[float] = []
        self._waiting: list[asyncio.Future[None]] = []
        self._changed = asyncio.Event()

    async def __call__(self, seconds: float) -> None:
        self.asked.append(seconds)
        fut = asyncio.get_running_loop().create_future()
        self._waiting.append(fut)
        self._changed.set()
        await fut

    async def release(self) -> float:
        """Wait for the supervisor to sleep, end that sleep, and return how long it asked."""
        while not self._waiting:
            self._changed.clear()
            await asyncio.wait_for(self._changed.wait(), 5)
        fut = self._waiting.pop(0)
        index = len(self.asked) - len(self._waiting) - 1
        fut.set_result(None)
        await asyncio.sleep(0)
        return self.asked[index]


class FakeLease:
    holder = "me"
    ttl_ms = 3000

    def __init__(self) -> None:
        self.owner: str | None = None
        self.error: Exception | None = None
        self.released = 0

    async def acquire(self, name: str) -> bool:
        if self.error is not None:
            raise self.error
        if self.owner in (None, self.holder):
            self.owner = self.holder
            return True
        return False

    async def release(self, name: str) -> None:
        self.released += 1
        if self.owner == self.holder:
            self.owner = None

    async def holder_of(self, name: str) -> str | None:
        return self.owner


async def until(check: Callable[[], bool]) -> None:
    for _ in range(500):
        if check():
            return
        await asyncio.sleep(0)
    raise AssertionError("condition not reached")


Make = Callable[..., Awaitable[tuple[ConnectionSupervisor, FakeConn, Sleeper]]]


@pytest.fixture
async def make() -> AsyncIterator[Make]:
    sups: list[ConnectionSupervisor] = []

    async def build(
        conn: FakeConn | None = None, lease: FakeLease | None = None, start: bool = True
    ) -> tuple[ConnectionSupervisor, FakeConn, Sleeper]:
        conn = conn or FakeConn()
        sleeper = Sleeper()
        sup = ConnectionSupervisor(
            "test account a",
            conn,
            backoff=Backoff(1, 4),
            lease=lease,
            lease_name="channel:test:a",
            sleep=sleeper,
        )
        sups.append(sup)
        if start:
            await sup.start()
        return sup, conn, sleeper

    yield build
    for sup in sups:
        await asyncio.wait_for(sup.stop(), 5)


async def test_connects_inline_and_stops(make: Make) -> None:
    sup, conn, _ = await make()
    assert (sup.state, conn.opened) == ("connected", 1)
    await sup.stop()
    assert (sup.state, conn.closed) == ("stopped", 1)


async def test_retries_with_capped_exponential_backoff(make: Make) -> None:
    conn = FakeConn()
    conn.prepare_errors = [OSError("down")] * 5
    sup, _, sleeper = await make(conn)
    assert sup.state == "retrying" and "OSError: down; retrying in 1s" in (sup.detail or "")
    delays = [await sleeper.release() for _ in range(5)]
    assert delays == [1, 2, 4, 4, 4]
    await until(lambda: sup.state == "connected")
    assert conn.opened == 1


async def test_fatal_error_at_start_raises_and_fails(make: Make) -> None:
    conn = FakeConn()
    conn.prepare_errors = [Fatal("401")]
    with pytest.raises(ChannelUnavailable, match="test account a: token rejected"):
        await make(conn)


async def test_fatal_error_later_gives_up(make: Make) -> None:
    sup, conn, sleeper = await make()
    conn.drop(Fatal("revoked"))
    await until(lambda: sup.state == "failed")
    assert sup.detail == "token rejected" and conn.closed == 1
    assert sleeper.asked == []  # no retry scheduled


async def test_a_dropped_connection_reopens_after_backoff(make: Make) -> None:
    sup, conn, sleeper = await make()
    conn.drop(ConnectionResetError("reset"))
    await until(lambda: sup.state == "retrying")
    assert await sleeper.release() == 1
    await until(lambda: conn.opened == 2 and sup.state == "connected")


async def test_standby_without_the_lease_then_takeover(make: Make) -> None:
    lease = FakeLease()
    lease.owner = "other"
    sup, conn, sleeper = await make(lease=lease)
    assert (sup.state, sup.detail, sup.holder, conn.opened) == (
        "standby",
        "held by other",
        "other",
        0,
    )
    assert await sleeper.release() == 0.5  # a standby asks every ttl/6 (D36)
    assert sup.state == "standby"
    lease.owner = None  # the holder died and its lease expired
    await sleeper.release()
    await until(lambda: sup.state == "connected")
    assert (sup.holder, conn.opened) == ("me", 1)


async def test_losing_the_lease_stops_receiving(make: Make) -> None:
    lease = FakeLease()
    sup, conn, sleeper = await make(lease=lease)
    assert sup.state == "connected"
    lease.owner = "other"
    await sleeper.release()
    await until(lambda: sup.state == "standby")
    assert conn.closed == 1


async def test_a_failed_renewal_stops_receiving_at_once(make: Make) -> None:
    lease = FakeLease()
    sup, conn, sleeper = await make(lease=lease)
    lease.error = OSError("database gone")
    await sleeper.release()
    await until(lambda: sup.state == "retrying")
    assert conn.closed == 1 and not sup.receiving
    lease.error = None
    await sleeper.release()  # the backoff
    await until(lambda: sup.state == "connected")


async def test_stop_releases_the_lease(make: Make) -> None:
    lease = FakeLease()
    sup, _, _ = await make(lease=lease)
    await sup.stop()
    assert lease.released == 1 and lease.owner is None


async def test_restart_reopens_without_backoff(make: Make) -> None:
    sup, conn, sleeper = await make()
    await sup.restart("silent for 90s")
    assert (conn.closed, conn.opened, sup.state) == (1, 2, "connected")
    assert sleeper.asked == []


class SlowConn(FakeConn):
    """Opening takes a few turns of the loop (a real handshake does)."""

    async def open(self) -> None:
        for _ in range(5):
            await asyncio.sleep(0)
        await super().open()


async def test_restart_opens_once_even_when_opening_takes_time(make: Make) -> None:
    """The loop must not see the restart's close as a drop and open a second connection
    while the restart's own open is under way (D165)."""
    sup, conn, sleeper = await make(SlowConn())
    await sup.restart("silent for 90s")
    for _ in range(50):
        await asyncio.sleep(0)
    assert (conn.opened, sup.state) == (2, "connected")
    conn.drop()  # the restarted connection is watched: its end reopens it after backoff
    assert await sleeper.release() == 1
    await until(lambda: conn.opened == 3)


async def test_a_failed_restart_retries_with_backoff(make: Make) -> None:
    sup, conn, sleeper = await make()
    conn.open_errors.append(ConnectionError("refused"))
    await sup.restart("silent for 90s")
    assert sup.state == "retrying"
    assert await sleeper.release() == 1
    await until(lambda: sup.state == "connected" and conn.opened == 2)


async def test_note_never_hides_standby(make: Make) -> None:
    lease = FakeLease()
    lease.owner = "other"
    sup, _, _ = await make(lease=lease)
    sup.note("retrying", "poll failed")
    assert sup.state == "standby"
