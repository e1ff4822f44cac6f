"""The store API against real SQLite and real PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.store import (
    DeliveryRecord,
    RunRecord,
    SessionQuery,
    Store,
    StoreError,
    TranscriptMessage,
    now_ms,
)


async def _session(store: Store, key: str, kind: str = "other", **kw: Any) -> None:
    await store.ensure_session(key, agent_id=key.split(":")[1], kind=kind, **kw)


async def test_ensure_session_is_idempotent_and_keeps_session_id(store: Store) -> None:
    a = await store.ensure_session("agent:main:main", agent_id="main", kind="main")
    b = await store.ensure_session("agent:main:main", agent_id="main", kind="main")
    assert a.session_id == b.session_id
    assert (await store.get_session_by_id(a.session_id)).key == "agent:main:main"  # type: ignore[union-attr]


async def test_list_orders_by_updated_and_filters_before_limit(store: Store) -> None:
    await _session(store, "agent:main:cron:nightly", kind="cron")
    await _session(store, "agent:main:main", kind="main")
    await store.update_session("agent:main:cron:nightly", updated_at=1000)
    await store.update_session("agent:main:main", updated_at=2000)
    rows = await store.list_sessions(SessionQuery(limit=1, kinds=("cron",)))
    assert [r.key for r in rows] == ["agent:main:cron:nightly"]
    rows = await store.list_sessions(SessionQuery())
    assert [r.key for r in rows] == ["agent:main:main", "agent:main:cron:nightly"]
    rows = await store.list_sessions(SessionQuery(updated_since=1500))
    assert [r.key for r in rows] == ["agent:main:main"]


async def test_agent_filter_with_exact_ids_and_globs(store: Store) -> None:
    for key in ("agent:main:main", "agent:other:main", "agent:ops:main"):
        await _session(store, key)
    rows = await store.list_sessions(SessionQuery(agent_ids=("main",)))
    assert {r.key for r in rows} == {"agent:main:main"}
    rows = await store.list_sessions(SessionQuery(agent_ids=("main",), agent_patterns=("oth*",)))
    assert {r.key for r in rows} == {"agent:main:main", "agent:other:main"}
    assert await store.list_sessions(SessionQuery(agent_ids=())) == []


async def test_reserved_keys_hidden_unless_asked(store: Store) -> None:
    await store.ensure_session("global", agent_id="main", kind="main")
    await store.ensure_session("unknown", agent_id="main", kind="other")
    assert await store.list_sessions(SessionQuery()) == []
    rows = await store.list_sessions(SessionQuery(include_reserved=True, exclude_keys=("unknown",)))
    assert [r.key for r in rows] == ["global"]


async def test_transcript_roundtrip_jsonl_mirror_and_tool_filter(store: Store) -> None:
    entry = await store.ensure_session("agent:main:main", agent_id="main", kind="main")
    t = now_ms()
    msgs = [
        TranscriptMessage.text("user", "hi", t),
        TranscriptMessage(
            role="toolResult",
            content=[{"type": "text", "text": "{}"}],
            timestamp=t,
            tool_call_id="c1",
            tool_name="sessions_list",
            is_error=False,
        ),
        TranscriptMessage.text("assistant", "hello", t),
    ]
    ids = await store.append_messages(entry, msgs)
    assert ids == sorted(ids)
    all_msgs = await store.history(entry.session_id)
    assert [m.role for m in all_msgs] == ["user", "toolResult", "assistant"]
    last_two = await store.history(entry.session_id, limit=2, include_tools=False)
    assert [m.plain_text() for m in last_two] == ["hi", "hello"]
    upto = await store.history(entry.session_id, up_to_id=ids[0])
    assert [m.plain_text() for m in upto] == ["hi"]
    lines = store.transcript_path(entry.session_id).read_text().splitlines()
    assert [json.loads(x)["role"] for x in lines] == ["user", "toolResult", "assistant"]
    assert json.loads(lines[1])["toolCallId"] == "c1"


async def test_recent_messages_is_per_session_and_skips_tool_results(store: Store) -> None:
    a = await store.ensure_session("agent:main:a", agent_id="main", kind="other")
    b = await store.ensure_session("agent:main:b", agent_id="main", kind="other")
    t = now_ms()
    await store.append_messages(a, [TranscriptMessage.text("user", f"a{i}", t) for i in range(5)])
    await store.append_messages(
        b,
        [
            TranscriptMessage.text("user", "b0", t),
            TranscriptMessage(role="toolResult", content=[], timestamp=t, tool_call_id="x"),
        ],
    )
    got = await store.recent_messages([a.session_id, b.session_id], 2)
    assert [m.plain_text() for m in got[a.session_id]] == ["a3", "a4"]
    assert [m.plain_text() for m in got[b.session_id]] == ["b0"]


async def test_labels_are_unique(store: Store) -> None:
    await _session(store, "agent:main:a")
    await _session(store, "agent:main:b")
    await store.set_label("agent:main:a", "worker")
    with pytest.raises(StoreError, match="label already in use: worker"):
        await store.set_label("agent:main:b", "worker")
    assert [e.key for e in await store.find_by_label("worker")] == ["agent:main:a"]


async def test_update_unknown_session_raises(store: Store) -> None:
    with pytest.raises(StoreError, match="Unknown session"):
        await store.update_session("agent:main:nope", label="x")
    with pytest.raises(StoreError, match="unknown session fields"):
        await store.update_session("agent:main:nope", bogus=1)  # type: ignore[call-arg]


async def test_runs_persist_and_inflight_are_aborted(store: Store) -> None:
    await _session(store, "agent:main:main")
    t = now_ms()
    await store.create_run(
        RunRecord(
            id="r1",
            session_key="agent:main:main",
            status="running",
            lane="main",
            deliver=True,
            created_at=t,
        )
    )
    await store.create_run(
        RunRecord(
            id="r2",
            session_key="agent:main:main",
            status="ok",
            lane="main",
            deliver=True,
            created_at=t + 1,
        )
    )
    aborted = await store.abort_inflight_runs("gateway restarted")
    assert [r.id for r in aborted] == ["r1"]
    r1 = await store.get_run("r1")
    assert r1 is not None and r1.status == "aborted" and r1.error == "gateway restarted"
    assert (await store.get_session("agent:main:main")).aborted_last_run is True  # type: ignore[union-attr]
    assert (await store.get_run("r2")).status == "ok"  # type: ignore[union-attr]


async def test_deliveries_newest_first_with_filters(store: Store) -> None:
    for i, outcome in enumerate(["delivered", "suppressed_by_policy", "failed"]):
        await store.record_delivery(
            DeliveryRecord(
                kind="reply",
                outcome=outcome,
                text=f"t{i}",
                created_at=now_ms(),
                session_key="agent:main:main",
                reason="rule 1" if i == 1 else None,
            )
        )
    rows = await store.list_deliveries()
    assert [r.text for r in rows] == ["t2", "t1", "t0"]
    rows = await store.list_deliveries(outcome="suppressed_by_policy")
    assert [(r.text, r.reason) for r in rows] == [("t1", "rule 1")]


async def test_delete_session_renames_transcript(store: Store) -> None:
    entry = await store.ensure_session("agent:main:subagent:x", agent_id="main", kind="other")
    await store.append_messages(entry, [TranscriptMessage.text("user", "hi", now_ms())])
    assert await store.delete_session(entry.key) is True
    assert await store.get_session(entry.key) is None
    assert await store.history(entry.session_id) == []
    leftovers = list(store.transcripts_dir.glob(f"{entry.session_id}.jsonl.deleted.*"))
    assert len(leftovers) == 1


async def test_rows_written_before_d12_with_lone_surrogates_read_cleaned(tmp_path: Path) -> None:
    """A session bricked by an older version (a lone surrogate in a stored row) reads again."""
    from sqlalchemy import insert

    from core.store.tables import MessageRow

    s = Store(f"sqlite+aiosqlite:///{tmp_path}/old.db", tmp_path)
    await s.open()
    try:
        entry = await s.ensure_session("agent:main:old", agent_id="main", kind="other")
        await s.write(
            lambda c: c.execute(
                insert(MessageRow.__table__).values(  # type: ignore[attr-defined]
                    session_key=entry.key,
                    session_id=entry.session_id,
                    role="user",
                    content=[{"type": "text", "text": "bad \ud800"}],
                    timestamp=1,
                    seq=1,
                )
            )
        )
        (msg,) = await s.history(entry.session_id)
        assert msg.plain_text() == "bad \ufffd"
        json.dumps(msg.to_wire(), ensure_ascii=False).encode("utf-8")
    finally:
        await s.close()
