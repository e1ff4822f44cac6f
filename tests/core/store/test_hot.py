"""The turn's statements on SQLite's driver and SQLite's one kept connection (D196):
the same rows, the same errors and the same reads as through SQLAlchemy's execution layer."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Connection, StaticPool, create_engine, select
from sqlalchemy.exc import IntegrityError

import core.store.statements as st
from core.store import Store, hot
from core.store.tables import metadata


def _run_params(run_id: str, meta: dict[str, Any] | None, deliver: bool) -> dict[str, Any]:
    return {
        "id": run_id,
        "session_key": "agent:main:x",
        "status": "queued",
        "lane": "main",
        "deliver": deliver,
        "input_message_id": None,
        "created_at": 5,
        "meta": meta,
        "owner": None,
    }


def _message_params(meta: dict[str, Any] | None, is_error: bool | None) -> dict[str, Any]:
    return {
        "session_key": "agent:main:x",
        "session_id": "s1",
        "role": "user",
        "content": [{"type": "text", "text": "héllo ☃"}],
        "timestamp": 1000,
        "tool_call_id": None,
        "tool_name": None,
        "is_error": is_error,
        "run_id": None,
        "meta": meta,
        "b_next_sid": "s1",
    }


def _write_all(c: Connection, fast: bool) -> None:
    cases = [(None, None, False), ({"a": [1, None, "é"]}, True, True)]
    for i, (meta, is_error, deliver) in enumerate(cases):
        run, msg = _run_params(f"r{i}", meta, deliver), _message_params(meta, is_error)
        if fast:
            hot.write(c, st.INSERT_RUN, run)
            hot.insert(c, st.INSERT_PLACED, msg)
            hot.write(c, st.UPDATE_RUN, {"b_rid": f"r{i}", "status": "ok", "meta": meta})
        else:
            c.execute(st.INSERT_RUN, run)
            c.execute(st.INSERT_PLACED, msg)
            c.execute(st.UPDATE_RUN, {"b_rid": f"r{i}", "status": "ok", "meta": meta})


def _stored(path: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(path) as raw:
        return [*raw.execute("SELECT * FROM runs"), *raw.execute("SELECT * FROM messages")]


@pytest.fixture
def engines(tmp_path: Path) -> Any:
    made = []
    for name in ("sa", "hot"):
        engine = create_engine(f"sqlite:///{tmp_path}/{name}.db", poolclass=StaticPool)
        metadata.create_all(engine)
        made.append(engine)
    yield made
    for engine in made:
        engine.dispose()


def test_rows_are_stored_as_sqlalchemy_stores_them(engines: Any, tmp_path: Path) -> None:
    """JSON `null` for a None meta, booleans as integers, the same escapes: byte for byte."""
    sa, fast = engines
    with sa.begin() as c:
        _write_all(c, fast=False)
    with fast.begin() as c:
        _write_all(c, fast=True)
    assert _stored(tmp_path / "hot.db") == _stored(tmp_path / "sa.db")
    assert len(_stored(tmp_path / "hot.db")) == 4


def test_rows_are_read_as_sqlalchemy_reads_them(engines: Any) -> None:
    sa, _ = engines
    with sa.begin() as c:
        _write_all(c, fast=False)
    with sa.connect() as c:
        q = st.HISTORY[True, True, False, False, True, True]
        params = {"b_sid": "s1", "b_limit": 10}
        assert hot.rows(c, q, params) == [tuple(r) for r in c.execute(q, params).all()]
        one = hot.first(c, st.MESSAGE_BY_ID, {"b_mid": 2})
        assert one is not None and one[1] == [{"type": "text", "text": "héllo ☃"}]
        assert one[5] is True and one[7] == {"a": [1, None, "é"]}  # bool and JSON decoded
        assert hot.first(c, st.MESSAGE_BY_ID, {"b_mid": 99}) is None


def test_driver_errors_are_sqlalchemys(engines: Any) -> None:
    _, fast = engines
    with pytest.raises(IntegrityError), fast.begin() as c:
        hot.write(c, st.INSERT_RUN, _run_params("r1", None, False))
        hot.write(c, st.INSERT_RUN, _run_params("r1", None, False))
    with fast.connect() as c:  # the failed transaction left nothing
        assert hot.rows(c, select(st.R.c.id), {}) == []


def test_a_statement_the_driver_path_cannot_run_goes_through_sqlalchemy(engines: Any) -> None:
    """RETURNING (and Python-side defaults, expanding IN lists) keep SQLAlchemy's path."""
    _, fast = engines
    with fast.begin() as c:
        hot.write(c, st.INSERT_RUN, _run_params("r1", None, False))
        stmt = st.UPDATE_RUN.returning(st.R.c.status)
        assert hot.first(c, stmt, {"b_rid": "r1", "status": "running"}) == ("running",)


def test_statements_built_per_call_do_not_grow_the_plans_for_ever(engines: Any) -> None:
    """Past `MAX_PLANS`, a new statement runs through SQLAlchemy and nothing more is kept."""
    _, fast = engines
    with fast.begin() as c:
        hot.write(c, st.INSERT_RUN, _run_params("r1", None, False))
        for i in range(hot.MAX_PLANS + 50):
            stmt = select(st.R.c.id).where(st.R.c.id == "r1").limit(i + 1)  # a new one each time
            assert hot.first(c, stmt, {}) == ("r1",)
    assert len(hot._PLANS) <= hot.MAX_PLANS


async def test_reads_see_another_writer_at_once(tmp_path: Path) -> None:
    """The kept connection (D196) holds no snapshot between reads: a row another process
    commits is read at once (D43's premise)."""
    store = Store(f"sqlite:///{tmp_path}/ct.db", tmp_path)
    await store.open()
    try:
        entry = await store.ensure_session("agent:main:x", agent_id="main", kind="direct")
        assert entry.label is None
        with sqlite3.connect(tmp_path / "ct.db") as other:
            other.execute("UPDATE sessions SET label = 'elsewhere' WHERE key = ?", (entry.key,))
        found = await store.get_session(entry.key)
        assert found is not None and found.label == "elsewhere"
    finally:
        await store.close()


async def test_a_lost_connection_is_replaced(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path}/ct.db", tmp_path)
    await store.open()
    try:
        entry = await store.ensure_session("agent:main:x", agent_id="main", kind="direct")
        conn = store._sqlite()
        conn.invalidate()
        assert await store.get_session(entry.key) == entry
        assert store._sqlite() is not conn
    finally:
        await store.close()
