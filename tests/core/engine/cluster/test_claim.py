"""D27: two run managers (two "processes") on one database keep each session's turns in FIFO,
one at a time, and a survivor aborts a dead owner's running turn and runs its queued ones."""

from __future__ import annotations

import asyncio

from core.engine.cluster.claim import TurnClaims
from core.engine.cluster.events import EventBus
from core.engine.cluster.takeover import Orphans, take_runs
from core.engine.runs import Lanes, RunManager, RunRequest
from core.engine.runs.contract import TurnResult
from core.model.tool_context import ToolContext
from core.store import RunRecord, SessionEntry, Store

KEY = "agent:main:main"


class Recorder:
    """A turn executor that logs start/end and can hold a turn until released."""

    def __init__(self, log: list[str], running: list[str]) -> None:
        self.log, self.running = log, running
        self.gates: dict[str, asyncio.Event] = {}
        self.started: dict[str, asyncio.Event] = {}

    def hold(self, text: str) -> asyncio.Event:
        self.started[text] = asyncio.Event()
        return self.gates.setdefault(text, asyncio.Event())

    async def run_turn(
        self, run: RunRecord, request: RunRequest, entry: SessionEntry, on_delta: object
    ) -> TurnResult:
        assert not self.running, f"{request.message} started while {self.running} runs"
        self.running.append(request.message)
        self.log.append(request.message)
        if request.message in self.started:
            self.started[request.message].set()
        gate = self.gates.get(request.message)
        if gate is not None:
            await gate.wait()
        self.running.remove(request.message)
        return TurnResult(reply=f"re:{request.message}")


def manager(
    store: Store, owner: str, bus: EventBus, log: list[str], running: list[str]
) -> tuple[RunManager, Recorder]:
    rec = Recorder(log, running)
    claims = TurnClaims(store, owner, bus, poll_seconds=5.0)
    return RunManager(store, rec, Lanes({}), owner=owner, claims=claims), rec


def request(text: str) -> RunRequest:
    return RunRequest(
        session_key=KEY, message=text, context=ToolContext(session_key=KEY, agent_id="main")
    )


async def test_two_managers_run_one_session_in_arrival_order(store: Store) -> None:
    await store.ensure_session(KEY, agent_id="main", kind="main")
    bus = EventBus()  # one process's bus shared: on PostgreSQL the same events cross by NOTIFY
    log: list[str] = []
    running: list[str] = []
    a, rec_a = manager(store, "A", bus, log, running)
    b, _ = manager(store, "B", bus, log, running)
    first = rec_a.hold("m00")
    runs = [await a.submit(request("m00"))]
    await asyncio.wait_for(rec_a.started["m00"].wait(), 10)
    for i in range(1, 30):  # alternate processes while the first turn holds the session
        runs.append(await (a if i % 2 == 0 else b).submit(request(f"m{i:02d}")))
    first.set()
    outcomes = await asyncio.gather(
        *((a if i % 2 == 0 else b).wait(r.id, 30) for i, r in enumerate(runs))
    )
    assert [o.status for o in outcomes] == ["ok"] * 30
    assert log == [f"m{i:02d}" for i in range(30)]
    entry = await store.get_session(KEY)
    assert entry is not None
    texts = [m.plain_text() for m in await store.history(entry.session_id, limit=100)]
    assert texts[::1] == [f"m{i:02d}" for i in range(30)]  # inputs placed in turn order
    await a.close()
    await b.close()


async def test_a_waiter_on_one_process_learns_of_a_run_on_the_other(store: Store) -> None:
    await store.ensure_session(KEY, agent_id="main", kind="main")
    bus = EventBus()
    a, rec_a = manager(store, "A", bus, [], [])
    b, _ = manager(store, "B", bus, [], [])
    gate = rec_a.hold("slow")
    run = await a.submit(request("slow"))
    waiting = asyncio.ensure_future(b.wait(run.id, 30))
    await asyncio.wait_for(rec_a.started["slow"].wait(), 10)
    assert not waiting.done()
    assert (await b.wait(run.id, 0)).status == "timeout"
    gate.set()
    assert (await asyncio.wait_for(waiting, 30)).status == "ok"
    await a.close()
    await b.close()


async def test_survivor_aborts_running_and_adopts_queued(store: Store) -> None:
    """A "dead" owner's rows are taken in one transaction: running → aborted, queued → ours."""
    await store.ensure_session(KEY, agent_id="main", kind="main")
    bus = EventBus()
    dead, rec_dead = manager(store, "dead", bus, [], [])
    rec_dead.hold("cut")
    cut = await dead.submit(request("cut"))
    await asyncio.wait_for(rec_dead.started["cut"].wait(), 10)
    queued = [await dead.submit(request(f"q{i}")) for i in range(3)]
    aborted, adopted = await take_runs(store, "survivor", Orphans(["dead"]))
    assert [r.id for r in aborted] == [cut.id]
    assert [r.id for r in adopted] == [r.id for r in queued]
    stored = await store.get_run(cut.id)
    assert stored is not None and stored.status == "aborted"
    entry = await store.get_session(KEY)
    assert entry is not None and entry.aborted_last_run
    for r in queued:
        got = await store.get_run(r.id)
        assert got is not None and (got.owner, got.status) == ("survivor", "queued")
    # the "dead" process was only slow: what it still finishes is fenced off, and its queued
    # turns are no longer its to start (it stops them without touching the survivor's rows)
    first_queued = asyncio.ensure_future(dead.wait(queued[0].id, 30))
    rec_dead.gates["cut"].set()
    assert (await dead.wait(cut.id, 30)).status == "aborted"
    outcome = await first_queued
    assert (outcome.status, outcome.error) == ("aborted", "taken over by another process")
    stored = await store.get_run(cut.id)
    assert stored is not None and (stored.status, stored.error) == (
        "aborted",
        "gateway restarted while the run was active",
    )
    for r in queued:
        got = await store.get_run(r.id)
        assert got is not None and (got.owner, got.status) == ("survivor", "queued")
    assert (await take_runs(store, "other", Orphans(["dead"]))) == ([], [])
    await asyncio.wait_for(dead.close(), 10)


async def test_stop_on_one_process_stops_the_turns_on_the_other(store: Store) -> None:
    await store.ensure_session(KEY, agent_id="main", kind="main")
    bus = EventBus()
    a, _ = manager(store, "A", bus, [], [])
    b, rec_b = manager(store, "B", bus, [], [])
    rec_b.hold("long")
    running = await b.submit(request("long"))
    await asyncio.wait_for(rec_b.started["long"].wait(), 10)
    queued = await b.submit(request("next"))
    assert await a.abort_session(KEY) == 2  # none here, two on B
    assert (await b.wait(running.id, 10)).status == "aborted"
    assert (await b.wait(queued.id, 10)).status == "aborted"
    assert await a.abort_session(KEY) == 0
    await a.close()
    await b.close()
