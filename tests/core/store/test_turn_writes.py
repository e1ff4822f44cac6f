"""A turn's store work: the warm context tail (D43) and the one-transaction run end (D41)."""

from __future__ import annotations

from pathlib import Path

from core.model.records import TurnWrite
from core.store import RunRecord, SessionEntry, Store, TranscriptMessage, now_ms


def _texts(msgs: list[TranscriptMessage]) -> list[str]:
    return [m.plain_text() for m in msgs]


async def _append(store: Store, entry: SessionEntry, *texts: str) -> None:
    await store.append_messages(entry, [TranscriptMessage.text("user", t, now_ms()) for t in texts])


async def test_context_tail_equals_history_as_the_session_grows(store: Store) -> None:
    entry = await store.ensure_session("agent:main:main", agent_id="main", kind="main")
    assert await store.context_tail(entry.session_id, 5) == []
    for i in range(0, 30, 3):
        await _append(store, entry, f"a{i}", f"b{i}", f"c{i}")
        expected = await store.history(entry.session_id, limit=7, placed_only=True)
        assert _texts(await store.context_tail(entry.session_id, 7)) == _texts(expected)
    waiting = RunRecord(
        id="r-wait",
        session_key=entry.key,
        status="queued",
        lane="main",
        deliver=False,
        created_at=now_ms(),
    )
    await store.enqueue_message(entry, TranscriptMessage.text("user", "later", now_ms()), waiting)
    assert "later" not in _texts(await store.context_tail(entry.session_id, 7))  # not placed
    await store.start_run(waiting, entry)
    assert _texts(await store.context_tail(entry.session_id, 2))[-1] == "later"


async def test_context_tail_sees_rows_written_by_another_process(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path}/ct.db"
    ours, theirs = Store(url, tmp_path / "a"), Store(url, tmp_path / "b")
    await ours.open()
    await theirs.open()
    try:
        entry = await ours.ensure_session("agent:main:main", agent_id="main", kind="main")
        await _append(ours, entry, "one")
        assert _texts(await ours.context_tail(entry.session_id, 10)) == ["one"]
        await _append(theirs, entry, "two", "three")  # another gateway process on the file
        assert _texts(await ours.context_tail(entry.session_id, 10)) == ["one", "two", "three"]
        assert _texts(await ours.context_tail(entry.session_id, 2)) == ["two", "three"]
    finally:
        await ours.close()
        await theirs.close()


async def test_run_end_commits_reply_session_fields_and_meta_together(store: Store) -> None:
    entry = await store.ensure_session("agent:main:main", agent_id="main", kind="main")
    run = RunRecord(
        id="r1",
        session_key=entry.key,
        status="queued",
        lane="main",
        deliver=False,
        created_at=now_ms(),
    )
    await store.enqueue_message(entry, TranscriptMessage.text("user", "hi", now_ms()), run)
    await store.start_run(run, entry)
    reply = TranscriptMessage.text("assistant", "hello", now_ms(), run_id=run.id)
    await store.finish_run(
        run,
        TurnWrite(entry, [reply], {"total_tokens": 12}, run_meta={"model": "m/x"}),
        status="ok",
        ended_at=now_ms(),
        input_tokens=10,
        output_tokens=2,
    )
    got = await store.get_run("r1")
    assert got is not None and got.status == "ok" and got.meta == {"model": "m/x"}
    assert got.input_tokens == 10
    session = await store.get_session(entry.key)
    assert session is not None and session.total_tokens == 12
    assert _texts(await store.history(entry.session_id)) == ["hi", "hello"]
    lines = store.transcript_path(entry.session_id).read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2  # the mirror follows the commit


async def test_context_tail_cache_stays_within_its_byte_budget(tmp_path: Path) -> None:
    from core.store.tail_cache import TailCache

    store = Store(f"sqlite+aiosqlite:///{tmp_path}/ct.db", tmp_path)
    await store.open()
    try:
        cache = store._tails = TailCache(budget=64 << 10)
        big = "x" * (20 << 10)
        for n in range(8):
            entry = await store.ensure_session(f"agent:main:s{n}", agent_id="main", kind="other")
            await _append(store, entry, big, f"last{n}")
            assert _texts(await store.context_tail(entry.session_id, 2)) == [big, f"last{n}"]
            assert cache.total <= cache.budget
        assert 0 < len(cache) < 8  # the oldest sessions were dropped, the newest kept
        huge = await store.ensure_session("agent:main:huge", agent_id="main", kind="other")
        await _append(store, huge, "y" * (80 << 10))
        assert len((await store.context_tail(huge.session_id, 1))[0].plain_text()) == 80 << 10
        assert cache.total <= cache.budget  # too big to keep: read each turn instead
    finally:
        await store.close()
