"""D75, D123 across processes: two runtimes on one PostgreSQL database act as two gateway
processes serving one chat (a message may reach either, as after a failover).

The first message runs on A with a slow fake model; the next two arrive on B 100 ms apart.
`collect`: two turns (the first, then one for the rest, on whichever process claims it);
`steer`: A's running turn takes B's messages into its next model request; `interrupt`: B's
message stops A's running turn (D127); `debounceMs`: a burst split over both processes is one
turn.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from core.api.testing import RecordingAdapter
from core.runtime import Runtime
from tests.conftest import RuntimeFactory
from tests.fakes.model import FakeModelServer, delay, text, tool_call
from tests.fakes.model_script import HoldFirst, content_text
from tests.pg import fresh_pg_database
from tests.polling import eventually

pytestmark = pytest.mark.postgres

CHAT = "u1"


def _users(request: dict[str, Any]) -> list[str]:
    return [content_text(m["content"]) for m in request["messages"] if m["role"] == "user"]


@asynccontextmanager
async def _two(
    make_runtime: RuntimeFactory, tmp_path: Path, mode: str, debounce: int = 0
) -> AsyncIterator[list[tuple[Runtime, RecordingAdapter]]]:
    async with fresh_pg_database() as db:
        out: list[tuple[Runtime, RecordingAdapter]] = []
        for name in ("a", "b"):
            adapter = RecordingAdapter("telegram")
            rt = await make_runtime(
                {
                    "channels": {"telegram": {"owners": [CHAT]}},
                    "messages": {"queue": {"mode": mode, "debounceMs": debounce}},
                    "gateway": {"stateDir": str(tmp_path / name), "database": {"url": db}},
                },
                adapters=[adapter],
            )
            out.append((rt, adapter))
        try:
            yield out
        finally:
            for rt, _ in out:
                await rt.stop()


def _texts(pair: list[tuple[Runtime, RecordingAdapter]]) -> list[str]:
    return [t for _, adapter in pair for t in adapter.texts()]


async def _transcript(rt: Runtime, adapter: RecordingAdapter) -> list[str]:
    key = rt.router.session_key_for(adapter.message("x", chat_id=CHAT))
    entry = await rt.store.get_session(key)
    assert entry is not None
    return [m.plain_text() for m in await rt.store.history(entry.session_id)]


async def _burst(
    a: RecordingAdapter, b: RecordingAdapter, fake: FakeModelServer, *, wait_first: bool
) -> None:
    await a.say("one", chat_id=CHAT, sender=CHAT)
    if wait_first:  # A's turn is at its model when the others reach B

        async def asked() -> bool:
            return len(fake.requests) >= 1

        await eventually(asked, timeout=30)
    await asyncio.sleep(0.1)  # the burst: messages 100 ms apart
    await b.say("two", chat_id=CHAT, sender=CHAT)
    await asyncio.sleep(0.1)
    await b.say("three", chat_id=CHAT, sender=CHAT)


@pytest.fixture(autouse=True)
def _one_os_process(monkeypatch: pytest.MonkeyPatch) -> None:
    # two runtimes in one OS process: neither may take the other for a dead process of this pid
    monkeypatch.setattr("core.engine.cluster.processes._pid_alive", lambda pid: True)


async def test_collect_across_processes(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer, tmp_path: Path
) -> None:
    async with _two(make_runtime, tmp_path, "collect") as pair:
        (a, a_chat), (_b, b_chat) = pair
        slow = HoldFirst(text("first"), text("rest"))
        fake_model.set_responder(slow)
        await _burst(a_chat, b_chat, fake_model, wait_first=True)
        slow.release.set()  # B stored both: A's first answer may come now

        async def answered() -> bool:
            return "rest" in _texts(pair)

        await eventually(answered, timeout=30)
        assert len(fake_model.requests) == 2
        assert _users(fake_model.requests[1])[-1] == "two\nthree"
        assert sorted(_texts(pair)) == ["first", "rest"] and a_chat.texts()[0] == "first"
        assert await _transcript(a, a_chat) == ["one", "first", "two", "three", "rest"]


async def test_steer_across_processes(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer, tmp_path: Path
) -> None:
    async with _two(make_runtime, tmp_path, "steer") as pair:
        (a, a_chat), (_b, b_chat) = pair
        slow = HoldFirst(tool_call("agents_list", {}), text("all three"))
        fake_model.set_responder(slow)
        await _burst(a_chat, b_chat, fake_model, wait_first=True)
        slow.release.set()  # B stored both: A's first model request may end now
        await a_chat.wait_for("all three", 1, timeout=30)
        assert len(fake_model.requests) == 2  # one turn (on A), two model requests
        assert _users(fake_model.requests[1]) == ["one", "two\nthree"]
        assert _texts(pair) == ["all three"]
        texts = await _transcript(a, a_chat)
        assert texts[:3] == ["one", "two", "three"] and texts[-1] == "all three"


async def test_debounce_across_processes(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer, tmp_path: Path
) -> None:
    # B's first message on a cold process takes a while to store on a loaded machine: the
    # window is wide enough for the 100 ms burst to land in it on either process
    async with _two(make_runtime, tmp_path, "queue", debounce=1500) as pair:
        (a, a_chat), (_b, b_chat) = pair
        fake_model.script(text("got all"))
        await _burst(a_chat, b_chat, fake_model, wait_first=False)

        async def answered() -> bool:
            return "got all" in _texts(pair)

        await eventually(answered, timeout=30)
        assert len(fake_model.requests) == 1
        assert _users(fake_model.requests[0])[-1] == "one\ntwo\nthree"
        assert _texts(pair) == ["got all"]
        assert await _transcript(a, a_chat) == ["one", "two", "three", "got all"]


async def test_interrupt_across_processes(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer, tmp_path: Path
) -> None:
    """D127: a message that reaches B stops the turn A is running; the turn that sees the
    last message answers, and nothing else is said."""
    async with _two(make_runtime, tmp_path, "interrupt") as pair:
        (a, a_chat), (_b, b_chat) = pair

        def answer(request: dict[str, Any]) -> Any:  # only a turn that saw "three" answers
            said = _users(request)[-1]
            return text("last") if said.endswith("three") else delay(10.0, text("never"))

        fake_model.set_responder(answer)
        await _burst(a_chat, b_chat, fake_model, wait_first=True)

        async def answered() -> bool:
            return "last" in _texts(pair)

        await eventually(answered, timeout=30)
        assert _texts(pair) == ["last"]  # A's turn was stopped, not finished
        key = a.router.session_key_for(a_chat.message("x", chat_id=CHAT))
        last = await a.store.last_run(key)
        assert last is not None and last.status == "ok"
        assert (await _transcript(a, a_chat))[:3] == ["one", "two", "three"]
