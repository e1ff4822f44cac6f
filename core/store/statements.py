"""The statements of a turn's hot path, built once with bind parameters (D42).

Building a Core statement coerces every column it names (26 for a session row) and an aliased
subquery builds new Column objects; done per call, that was most of the store's CPU per turn.
These are built at import and executed with a parameter dict; SQLAlchemy's compiled cache then
serves them without recompiling. Bind names never equal a column name (the SET of an UPDATE
takes its columns from the parameter keys).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from sqlalchemy import Connection, and_, bindparam, func, insert, select, update

import core.store.hot as hot
from core.model.records import SessionEntry
from core.store.tables import MessageRow, RunRow, SessionRow

S = SessionRow.__table__  # type: ignore[attr-defined]
M = MessageRow.__table__  # type: ignore[attr-defined]
R = RunRow.__table__  # type: ignore[attr-defined]

WAITING = 2**62
"""`seq` of a message still waiting for its turn (D13; see core.store.store)."""

SESSION_COLS = tuple(S.c[f.name] for f in fields(SessionEntry))
MSG_COLS = (
    M.c.role,
    M.c.content,
    M.c.timestamp,
    M.c.tool_call_id,
    M.c.tool_name,
    M.c.is_error,
    M.c.run_id,
    M.c.meta,
    M.c.id,
    M.c.seq,
)
NEWEST_FIRST = (M.c.seq.desc(), M.c.id.desc())
MESSAGE_VALUES = (
    "session_key",
    "session_id",
    "role",
    "content",
    "timestamp",
    "tool_call_id",
    "tool_name",
    "is_error",
    "run_id",
    "meta",
)

_placed = M.alias("placed")
NEXT_SEQ = (
    select(func.coalesce(func.max(_placed.c.seq), 0) + 1)
    .where(and_(_placed.c.session_id == bindparam("b_next_sid"), _placed.c.seq < WAITING))
    .scalar_subquery()
)
"""The session's next place, evaluated inside the INSERT/UPDATE itself (bind `b_next_sid`)."""

SESSION_BY_KEY = select(*SESSION_COLS).where(S.c.key == bindparam("b_key"))
INSERT_PLACED = insert(M).values(seq=NEXT_SEQ)
INSERT_WAITING = insert(M).values(seq=WAITING)
PLACE = update(M).where(and_(M.c.id == bindparam("b_mid"), M.c.seq == WAITING)).values(seq=NEXT_SEQ)
MESSAGE_BY_ID = select(*MSG_COLS).where(M.c.id == bindparam("b_mid"))
UPDATE_SESSION = update(S).where(S.c.key == bindparam("b_key"))
UPDATE_RUN = update(R).where(R.c.id == bindparam("b_rid"))
UPDATE_RUN_FENCED = update(R).where(
    and_(
        R.c.id == bindparam("b_rid"),
        R.c.owner == bindparam("b_owner"),
        R.c.status.in_(("queued", "running")),
    )
)
"""A run's end in a cluster (D27): only while `b_owner` still owns it and it is in flight."""
INSERT_RUN = insert(R)
RUN_BY_ID = select(R).where(R.c.id == bindparam("b_rid"))


def _history(
    placed_only: bool, include_tools: bool, up_to: bool, run: bool, limit: bool, summaries: bool
) -> Any:
    q = select(*MSG_COLS).where(M.c.session_id == bindparam("b_sid"))
    if placed_only:
        q = q.where(M.c.seq < WAITING)
    if not include_tools:
        q = q.where(M.c.role != "toolResult")
    if not summaries:  # D71: a compaction's summaries only where asked for
        q = q.where(M.c.role != "summary")
    if up_to:
        q = q.where(M.c.id <= bindparam("b_up_to"))
    if run:
        q = q.where(M.c.run_id == bindparam("b_run"))
    q = q.order_by(*NEWEST_FIRST)
    return q.limit(bindparam("b_limit")) if limit else q


HISTORY = {
    flags: _history(*flags)
    for flags in (
        (p, t, u, r, lim, sm)
        for p in (False, True)
        for t in (False, True)
        for u in (False, True)
        for r in (False, True)
        for lim in (False, True)
        for sm in (False, True)
    )
}
"""The history query for each combination of its optional filters (64, built once)."""


def message_params(m: Any, key: str, session_id: str) -> dict[str, Any]:
    return {
        "session_key": key,
        "session_id": session_id,
        "role": m.role,
        "content": m.content,
        "timestamp": m.timestamp,
        "tool_call_id": m.tool_call_id,
        "tool_name": m.tool_name,
        "is_error": m.is_error,
        "run_id": m.run_id,
        "meta": m.meta,
        "b_next_sid": session_id,
    }


def update_session(c: Connection, key: str, values: Mapping[str, Any]) -> int:
    return hot.write(c, UPDATE_SESSION, {"b_key": key, **values})


def update_run(c: Connection, run_id: str, values: Mapping[str, Any]) -> int:
    return hot.write(c, UPDATE_RUN, {"b_rid": run_id, **values})


def update_run_fenced(c: Connection, run_id: str, owner: str, values: Mapping[str, Any]) -> int:
    return int(c.execute(UPDATE_RUN_FENCED, {"b_rid": run_id, "b_owner": owner, **values}).rowcount)
