"""The hot statements of a turn (D42) run on SQLite's driver directly (D196).

SQLAlchemy's execution layer (the compiled-cache lookup, parameter construction, the execution
context and the result object) cost about four times the statement itself on SQLite: ~11 µs
against ~3 µs for an indexed UPDATE, a dozen times per turn. For SQLite these functions compile
each (statement, parameter names) pair once with SQLAlchemy, keep its SQL, its positional
parameter order and the column types' own bind and result processors (so JSON and booleans go
in and come out exactly as SQLAlchemy would make them), and then run it on the connection's
`sqlite3` connection inside the caller's transaction. A statement whose compiled form needs
more (Python-side defaults, RETURNING, expanding IN lists) keeps SQLAlchemy's path, and so does
PostgreSQL. Driver errors are raised as SQLAlchemy's own exception classes, as before.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError

Row = tuple[Any, ...]
_FROM_PARAMS = object()


class _Plan:
    __slots__ = ("binds", "results", "sql")

    def __init__(
        self,
        sql: str,
        binds: tuple[tuple[str, Callable[[Any], Any] | None, Any], ...],
        results: tuple[Callable[[Any], Any] | None, ...],
    ) -> None:
        self.sql = sql
        self.binds = binds  # (name, processor, fixed value or _FROM_PARAMS), in SQL order
        self.results = results

    def args(self, params: Mapping[str, Any]) -> tuple[Any, ...]:
        out = []
        for name, proc, fixed in self.binds:
            value = params[name] if fixed is _FROM_PARAMS else fixed
            out.append(value if proc is None else proc(value))  # None too (JSON `null`)
        return tuple(out)

    def row(self, raw: Row) -> Row:
        return tuple(v if p is None else p(v) for p, v in zip(self.results, raw, strict=True))


_PLANS: dict[tuple[int, tuple[str, ...]], tuple[Any, _Plan | None]] = {}
"""By statement (module-level ones, built once: D42, held here so an id is never reused) and
parameter names."""


MAX_PLANS = 1024
"""The turn's statements and their parameter-name sets make a few dozen plans; a caller that
built statements per call would otherwise grow the dict (and keep each statement) for ever."""


def _plan(c: Connection, stmt: Any, params: Mapping[str, Any]) -> _Plan | None:
    key = (id(stmt), tuple(params))
    found = _PLANS.get(key)
    if found is not None and found[0] is stmt:
        return found[1]
    if len(_PLANS) >= MAX_PLANS:
        return None  # SQLAlchemy's own path, with its own bounded cache
    plan = _compile(c, stmt, params)
    _PLANS[key] = (stmt, plan)
    return plan


def _compile(c: Connection, stmt: Any, params: Mapping[str, Any]) -> _Plan | None:
    """The plan of `stmt` for these parameter names, or None where SQLAlchemy must run it."""
    dialect = c.dialect
    compiled: Any = stmt.compile(dialect=dialect, column_keys=sorted(params))
    if (
        compiled.insert_prefetch
        or compiled.update_prefetch
        or compiled.effective_returning
        or compiled.literal_execute_params
        or compiled.post_compile_params
        or compiled.escaped_bind_names
        or compiled.positiontup is None
    ):
        return None
    processors = compiled._bind_processors
    binds = []
    for name in compiled.positiontup:
        bind = compiled.binds[name]
        if name in params:
            fixed: Any = _FROM_PARAMS
        elif bind.required or bind.callable is not None:
            return None
        else:
            fixed = bind.value
        binds.append((name, processors.get(name), fixed))
    results = tuple(
        col.type._cached_result_processor(dialect, None) for col in compiled._result_columns
    )
    return _Plan(compiled.string, tuple(binds), results)


def _sqlite(c: Connection) -> sqlite3.Connection | None:
    if c.dialect.name != "sqlite":
        return None
    raw = c.connection.driver_connection
    return raw if isinstance(raw, sqlite3.Connection) else None


def _run(raw: sqlite3.Connection, c: Connection, plan: _Plan, args: Any, many: bool) -> Any:
    try:
        return raw.executemany(plan.sql, args) if many else raw.execute(plan.sql, args)
    except sqlite3.Error as exc:  # the same exception classes as through SQLAlchemy
        raise DBAPIError.instance(plan.sql, args, exc, sqlite3.Error, dialect=c.dialect) from exc


def first(c: Connection, stmt: Any, params: Mapping[str, Any]) -> Row | None:
    """`c.execute(stmt, params).first()`, as a plain tuple."""
    raw = _sqlite(c)
    plan = _plan(c, stmt, params) if raw is not None else None
    if raw is None or plan is None:
        found = c.execute(stmt, params).first()
        return None if found is None else tuple(found)
    cur = _run(raw, c, plan, plan.args(params), False)
    try:
        got = cur.fetchone()
    finally:
        cur.close()  # the statement ends here: no read is left open (D43)
    return None if got is None else plan.row(got)


def rows(c: Connection, stmt: Any, params: Mapping[str, Any]) -> list[Row]:
    """`c.execute(stmt, params).all()`, as plain tuples."""
    raw = _sqlite(c)
    plan = _plan(c, stmt, params) if raw is not None else None
    if raw is None or plan is None:
        return [tuple(r) for r in c.execute(stmt, params).all()]
    cur = _run(raw, c, plan, plan.args(params), False)
    try:
        got = cur.fetchall()
    finally:
        cur.close()
    return [plan.row(r) for r in got]


def write(c: Connection, stmt: Any, params: Mapping[str, Any]) -> int:
    """`c.execute(stmt, params).rowcount` for an INSERT, UPDATE or DELETE."""
    raw = _sqlite(c)
    plan = _plan(c, stmt, params) if raw is not None else None
    if raw is None or plan is None:
        return int(c.execute(stmt, params).rowcount)
    cur = _run(raw, c, plan, plan.args(params), False)
    count = cur.rowcount
    cur.close()
    return int(count)


def insert(c: Connection, stmt: Any, params: Mapping[str, Any]) -> int:
    """`c.execute(stmt, params).inserted_primary_key[0]` for a table with an integer key."""
    raw = _sqlite(c)
    plan = _plan(c, stmt, params) if raw is not None else None
    if raw is None or plan is None:
        return int(c.execute(stmt, params).inserted_primary_key[0])  # type: ignore[index]
    cur = _run(raw, c, plan, plan.args(params), False)
    rowid = cur.lastrowid
    cur.close()
    assert rowid is not None
    return int(rowid)


def write_many(c: Connection, stmt: Any, params: Sequence[Mapping[str, Any]]) -> None:
    """`c.execute(stmt, params)` with a list of parameter sets of the same names."""
    raw = _sqlite(c)
    plan = _plan(c, stmt, params[0]) if raw is not None else None
    if raw is None or plan is None:
        c.execute(stmt, list(params))
        return
    _run(raw, c, plan, [plan.args(p) for p in params], True).close()
