"""The JSONL transcript mirrors committed rows: a failed append never fails the store write,
and a stale file (failed append, or a crash between commit and append) is rebuilt whole."""

from __future__ import annotations

import json
from pathlib import Path

from core.store import Store, TranscriptMessage


def lines(store: Store, session_id: str) -> list[str]:
    path = store.transcript_path(session_id)
    return [
        json.loads(line)["content"][0]["text"]
        for line in path.read_text(encoding="utf-8").splitlines()
    ]


async def test_failed_append_keeps_the_rows_and_the_file_heals(store: Store) -> None:
    entry = await store.ensure_session("agent:main:m", agent_id="main", kind="other")
    await store.append_messages(entry, [TranscriptMessage.text("user", "one", 1)])
    path = store.transcript_path(entry.session_id)
    path.unlink()
    path.mkdir()  # appending now fails with an OSError
    ids = await store.append_messages(entry, [TranscriptMessage.text("assistant", "two", 2)])
    assert len(ids) == 1  # the store write stood
    assert [m.plain_text() for m in await store.history(entry.session_id)] == ["one", "two"]
    path.rmdir()
    await store.append_messages(entry, [TranscriptMessage.text("user", "three", 3)])
    assert lines(store, entry.session_id) == ["one", "two", "three"]


async def test_a_file_behind_its_rows_is_rebuilt_by_the_next_process(
    store: Store, tmp_path: Path
) -> None:
    entry = await store.ensure_session("agent:main:m", agent_id="main", kind="other")
    await store.append_messages(
        entry,
        [TranscriptMessage.text("user", "one", 1), TranscriptMessage.text("assistant", "two", 2)],
    )
    path = store.transcript_path(entry.session_id)
    # a crash between the commit and the append: the file misses the last line
    path.write_text(path.read_text(encoding="utf-8").splitlines(keepends=True)[0], encoding="utf-8")
    restarted = Store(store.url, store.state_dir)
    await restarted.open()
    try:
        await restarted.append_messages(entry, [TranscriptMessage.text("user", "three", 3)])
        assert lines(restarted, entry.session_id) == ["one", "two", "three"]
    finally:
        await restarted.close()
