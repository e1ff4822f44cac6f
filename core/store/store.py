"""The one store API: sessions, transcripts, runs and deliveries.

Every operation is written once, as a function of a synchronous SQLAlchemy connection, and run
by :meth:`Store.read` / :meth:`Store.write`: inline on one shared connection for SQLite (the
embedded default; an indexed statement costs less than a thread hop), through asyncpg's
`run_sync` for PostgreSQL. Queries are indexed and set-based: listing sessions with their last
messages is two statements whatever the number of sessions.
"""

from __future__ import annotations

import json
import logging
import os
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, and_, delete, func, insert, or_, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncEngine

import core.store.statements as st
from core.model.errors import CrosstalkError
from core.model.records import (
    SESSION_FIELDS,
    DeliveryRecord,
    RunRecord,
    SessionEntry,
    SessionQuery,
    TranscriptMessage,
    TurnWrite,
)
from core.model.text import clean_json, clean_text
from core.store.engine import (
    create_and_stamp,
    head_revision,
    is_sqlite,
    make_engine,
    make_sync_sqlite_engine,
    schema_revision,
    sqlite_path,
    upgrade,
)
from core.store.files import open_private, private_dir, private_file, tighten_tree
from core.store.tables import DeliveryRow, MessageRow, RunRow, SessionRow
from core.store.tail_cache import TailCache

T = TypeVar("T")
log = logging.getLogger(__name__)

S = SessionRow.__table__  # type: ignore[attr-defined]
M = MessageRow.__table__  # type: ignore[attr-defined]
R = RunRow.__table__  # type: ignore[attr-defined]
D = DeliveryRow.__table__  # type: ignore[attr-defined]

_SESSION_COLS = st.SESSION_COLS
_MSG_COLS = st.MSG_COLS
# Transcript order (D13): placed messages by their place (`seq`), then those still waiting for
# their turn, in arrival order. Waiting messages carry `seq = WAITING` rather than NULL so that one
# index (session_id, seq, id) serves the order on SQLite and PostgreSQL alike (they sort NULLs
# differently); the value types show them as `seq=None`.
WAITING = st.WAITING
_NEWEST_FIRST = st.NEWEST_FIRST


def now_ms() -> int:
    return int(time.time() * 1000)


class StoreError(CrosstalkError):
    """A store operation was refused (unknown session, label in use, ...)."""


def _glob_to_like(pattern: str) -> str:
    escaped = pattern.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped.replace("*", "%")


def _message(row: Any) -> TranscriptMessage:
    msg = TranscriptMessage(*row[-len(_MSG_COLS) :])
    if msg.seq is not None and msg.seq >= WAITING:
        msg.seq = None
    # rows written before D12 may hold lone surrogates (SQLite JSON keeps them as escapes):
    # they are cleaned on the way out too, so such a session reads (and answers) again
    msg.content = clean_json(msg.content)
    return msg


def _place(c: Connection, session_id: str, message_id: int) -> TranscriptMessage | None:
    """Give a waiting message the next place of its transcript; None if it already has one."""
    done = c.execute(st.PLACE, {"b_mid": message_id, "b_next_sid": session_id}).rowcount
    if not done:
        return None
    row = c.execute(st.MESSAGE_BY_ID, {"b_mid": message_id}).first()
    return _message(row) if row else None


def _insert_ignore(c: Connection, table: Any, values: dict[str, Any], keys: list[str]) -> None:
    """INSERT … ON CONFLICT DO NOTHING: concurrent creators of one row both succeed."""
    ins = pg_insert(table) if c.dialect.name == "postgresql" else sqlite_insert(table)
    c.execute(ins.values(**values).on_conflict_do_nothing(index_elements=keys))


def _session(conn: Connection, key: str) -> SessionEntry | None:
    row = conn.execute(st.SESSION_BY_KEY, {"b_key": key}).first()
    return SessionEntry(*row) if row else None


def _jsonl(m: TranscriptMessage) -> str:
    return clean_text(json.dumps(m.to_wire(), ensure_ascii=False)) + "\n"


def _line_count(path: Path) -> int:
    if not path.exists():
        return 0
    with path.open("rb") as fh:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 16), b""))


def _check_fields(values: dict[str, Any]) -> None:
    unknown = set(values) - SESSION_FIELDS
    if unknown:
        raise StoreError(f"unknown session fields: {', '.join(sorted(unknown))}")


class Store:
    """Async facade over SQLite or PostgreSQL; transcripts are mirrored to JSONL files."""

    def __init__(self, url: str, state_dir: Path) -> None:
        self.url = url
        self.state_dir = state_dir
        self.transcripts_dir = state_dir / "transcripts"
        self._sync: Engine | None = make_sync_sqlite_engine(url) if is_sqlite(url) else None
        self._async: AsyncEngine | None = None if self._sync else make_engine(url)
        # reads run outside a transaction (D44): READ COMMITTED gives each statement its own
        # snapshot either way, and a read is then one round trip instead of BEGIN/…/ROLLBACK
        self._reads: AsyncEngine | None = (
            self._async.execution_options(isolation_level="AUTOCOMMIT") if self._async else None
        )
        self._mirror_checked: set[str] = set()  # session ids whose JSONL matched the rows
        self._mirror_stale: set[str] = set()  # session ids whose last JSONL append failed
        self._tails = TailCache() if self._sync is not None else None  # D43: SQLite only

    async def open(self, *, migrate: bool = True) -> None:
        """Bring the schema to the newest migration.

        A new database is created from the table definitions and stamped, and one already at
        the head is left alone; only an older schema runs Alembic (whose import alone costs
        ~10 MiB and ~0.1 s that the gateway would otherwise keep for its lifetime).
        """
        private_dir(self.state_dir)
        private_dir(self.transcripts_dir)
        tighten_tree(self.state_dir)
        db_file = sqlite_path(self.url)
        if db_file is not None:
            private_file(db_file)  # before SQLite creates it: its WAL and SHM inherit 0600
        if not migrate:
            return
        head = head_revision()
        current = await self.read(schema_revision)
        if current == "":
            await self.write(lambda c: create_and_stamp(c, head))
        elif current != head:
            await upgrade(self.url)

    async def close(self) -> None:
        if self._sync is not None:
            self._sync.dispose()
        if self._async is not None:
            await self._async.dispose()

    @property
    def dialect(self) -> str:
        return "sqlite" if self._sync is not None else "postgresql"

    async def read(self, op: Callable[[Connection], T]) -> T:
        """Run a read-only query function; extensions (e.g. the sub-agent registry) use this
        too. On PostgreSQL it runs outside a transaction (D44): never write from it."""
        if self._sync is not None:
            with self._sync.connect() as conn:
                return op(conn)
        assert self._reads is not None
        async with self._reads.connect() as aconn:
            return await aconn.run_sync(op)

    async def write(self, op: Callable[[Connection], T]) -> T:
        """Run a function inside one transaction (committed when it returns)."""
        if self._sync is not None:
            with self._sync.begin() as conn:
                return op(conn)
        assert self._async is not None
        async with self._async.begin() as aconn:
            return await aconn.run_sync(op)

    def transcript_path(self, session_id: str) -> Path:
        return self.transcripts_dir / f"{session_id}.jsonl"

    # ---- sessions -------------------------------------------------------------------------

    async def get_session(self, key: str) -> SessionEntry | None:
        return await self.read(lambda c: _session(c, key))

    async def get_session_by_id(self, session_id: str) -> SessionEntry | None:
        def op(c: Connection) -> SessionEntry | None:
            row = c.execute(select(*_SESSION_COLS).where(S.c.session_id == session_id)).first()
            return SessionEntry(*row) if row else None

        return await self.read(op)

    async def ensure_session(
        self, key: str, *, agent_id: str, kind: str, **fields: Any
    ) -> SessionEntry:
        """Return the session, creating it with `fields` when it does not exist yet."""
        found = await self.read(lambda c: _session(c, key))
        if found is not None:  # the common case: a read, no transaction to commit
            return found
        now = now_ms()
        values = {
            "key": key,
            "agent_id": agent_id,
            "kind": kind,
            "session_id": str(uuid.uuid4()),
            "created_at": now,
            "updated_at": now,
            **fields,
        }
        _check_fields(values)

        def op(c: Connection) -> SessionEntry:
            # an upsert, not select-then-insert: simultaneous first messages into a new session
            # (many HTTP requests, web-chat sockets) must all find the one row
            _insert_ignore(c, S, values, ["key"])
            entry = _session(c, key)
            assert entry is not None
            return entry

        return await self.write(op)

    async def update_session(self, key: str, *, touch: bool = True, **fields: Any) -> SessionEntry:
        """Patch fields of one session; `touch` bumps `updatedAt` (the list order)."""
        _check_fields(fields)
        if touch:
            fields.setdefault("updated_at", now_ms())

        def op(c: Connection) -> SessionEntry:
            if fields and c.execute(update(S).where(S.c.key == key).values(**fields)).rowcount == 0:
                raise StoreError(f"Unknown session: {key}")
            entry = _session(c, key)
            if entry is None:
                raise StoreError(f"Unknown session: {key}")
            return entry

        return await self.write(op)

    async def set_label(self, key: str, label: str | None) -> SessionEntry:
        """Labels are unique across the store so `sessions_send {label}` finds one session."""
        if label is not None:
            q = select(S.c.key).where(and_(S.c.label == label, S.c.key != key)).limit(1)
            if await self.read(lambda c: c.execute(q).first()) is not None:
                raise StoreError(f"label already in use: {label}")
        return await self.update_session(key, label=label)

    async def delete_session(self, key: str) -> bool:
        """Remove a session and its transcript rows; the JSONL file is renamed, not erased."""

        def op(c: Connection) -> SessionEntry | None:
            entry = _session(c, key)
            if entry is not None:
                c.execute(delete(M).where(M.c.session_key == key))
                c.execute(delete(S).where(S.c.key == key))
            return entry

        entry = await self.write(op)
        if entry is None:
            return False
        if self._tails is not None:
            self._tails.forget(entry.session_id)
        path = self.transcript_path(entry.session_id)
        if path.exists():
            stamp = time.strftime("%Y-%m-%dT%H-%M-%S", time.gmtime())
            path.rename(path.with_name(f"{path.name}.deleted.{stamp}"))
        return True

    async def list_sessions(self, query: SessionQuery) -> list[SessionEntry]:
        conds = []
        if query.kinds:
            conds.append(S.c.kind.in_(query.kinds))
        if query.agent_ids is not None:
            agent_conds = [S.c.agent_id.in_(query.agent_ids)] if query.agent_ids else []
            agent_conds += [
                func.lower(S.c.agent_id).like(_glob_to_like(p), escape="\\")
                for p in query.agent_patterns
            ]
            conds.append(or_(*agent_conds) if agent_conds else S.c.key.is_(None))
        if query.updated_since is not None:
            conds.append(S.c.updated_at >= query.updated_since)
        if query.spawned_by is not None:
            conds.append(S.c.spawned_by == query.spawned_by)
        if not query.include_reserved:
            conds.append(S.c.key.not_in(("global", "unknown")))
        if query.exclude_keys:
            conds.append(S.c.key.not_in(query.exclude_keys))
        q = select(*_SESSION_COLS)
        if conds:
            q = q.where(and_(*conds))
        q = q.order_by(S.c.updated_at.desc(), S.c.key)
        if query.limit is not None:
            q = q.limit(query.limit)
        return await self.read(lambda c: [SessionEntry(*r) for r in c.execute(q)])

    async def find_sessions(
        self, text: str, *, spawned_by: str | None = None, limit: int = 8
    ) -> list[SessionEntry]:
        """Substring match on key, sessionId, label or display name (sessionId resolution)."""
        like = f"%{text.lower()}%"
        conds = [
            or_(
                func.lower(S.c.key).like(like),
                func.lower(S.c.session_id).like(like),
                func.lower(S.c.label).like(like),
                func.lower(S.c.display_name).like(like),
            )
        ]
        if spawned_by is not None:
            conds.append(S.c.spawned_by == spawned_by)
        q = select(*_SESSION_COLS).where(and_(*conds)).order_by(S.c.updated_at.desc()).limit(limit)
        return await self.read(lambda c: [SessionEntry(*r) for r in c.execute(q)])

    async def find_by_label(
        self,
        label: str,
        *,
        agent_id: str | None = None,
        spawned_by: str | None = None,
        limit: int = 2,
    ) -> list[SessionEntry]:
        conds = [S.c.label == label]
        if agent_id is not None:
            conds.append(S.c.agent_id == agent_id)
        if spawned_by is not None:
            conds.append(S.c.spawned_by == spawned_by)
        q = select(*_SESSION_COLS).where(and_(*conds)).order_by(S.c.updated_at.desc()).limit(limit)
        return await self.read(lambda c: [SessionEntry(*r) for r in c.execute(q)])

    # ---- transcripts ----------------------------------------------------------------------

    @staticmethod
    def _insert_messages(
        c: Connection,
        entry: SessionEntry,
        messages: Sequence[TranscriptMessage],
        touch: bool,
        placed: bool = True,
    ) -> list[int]:
        ids = []
        stmt = st.INSERT_PLACED if placed else st.INSERT_WAITING
        for m in messages:
            values = st.message_params(m, entry.key, entry.session_id)
            if not placed:
                del values["b_next_sid"]
            res = c.execute(stmt, values)
            m.id = int(res.inserted_primary_key[0])  # type: ignore[index]
            ids.append(m.id)
        if touch:
            st.update_session(c, entry.key, {"updated_at": now_ms()})
        return ids

    # The JSONL transcript is a mirror of committed, placed rows: the database is the record.
    # It is appended after the commit and a failed write never fails (or half-does) the store
    # operation: the file is marked stale and rewritten whole from the rows, atomically, at the
    # session's next write. The first write of a process to a session checks the file's line
    # count against the rows, so a crash between commit and append heals the same way. Lines are
    # cleaned (D12), so no text can make the append itself fail.

    def _mirror(self, entry: SessionEntry, messages: Sequence[TranscriptMessage]) -> None:
        sid = entry.session_id
        if sid not in self._mirror_checked or sid in self._mirror_stale:
            return  # the caller rebuilds (async) instead
        try:
            with open_private(self.transcript_path(sid), "a") as fh:
                fh.write("".join(_jsonl(m) for m in messages))
        except OSError as exc:
            log.warning(
                "transcript mirror of %s is stale (%s); rebuilt at its next write", sid, exc
            )
            self._mirror_stale.add(sid)

    async def _mirror_placed(
        self, entry: SessionEntry, messages: Sequence[TranscriptMessage]
    ) -> None:
        sid = entry.session_id
        if sid in self._mirror_checked and sid not in self._mirror_stale:
            self._mirror(entry, messages)
            return
        await self.rebuild_transcript(entry)

    async def rebuild_transcript(self, entry: SessionEntry) -> None:
        """Rewrite a session's JSONL file from its placed rows unless it already matches."""
        sid = entry.session_id
        path = self.transcript_path(sid)
        rows = await self.read(
            lambda c: [
                _message(r)
                for r in c.execute(
                    select(*_MSG_COLS)
                    .where(and_(M.c.session_id == sid, M.c.seq < WAITING))
                    .order_by(M.c.seq, M.c.id)
                ).all()
            ]
        )
        try:
            if sid in self._mirror_stale or _line_count(path) != len(rows):
                tmp = path.with_name(f"{path.name}.tmp")
                with open_private(tmp, "w") as fh:
                    fh.write("".join(_jsonl(m) for m in rows))
                os.replace(tmp, path)
        except OSError as exc:
            log.warning("transcript mirror of %s could not be rebuilt: %s", sid, exc)
            self._mirror_stale.add(sid)
            return
        self._mirror_stale.discard(sid)
        self._mirror_checked.add(sid)

    async def append_messages(
        self,
        entry: SessionEntry,
        messages: Sequence[TranscriptMessage],
        *,
        touch: bool = True,
        queued: bool = False,
        **session_fields: Any,
    ) -> list[int]:
        """Store messages in order (and optional session fields, same transaction), mirror them
        to the JSONL transcript, bump `updatedAt`. `queued` messages wait for their turn to be
        placed (D13): stored now, in the transcript from :meth:`start_run`."""
        if not messages and not session_fields:
            return []
        _check_fields(session_fields)

        def op(c: Connection) -> list[int]:
            ids = self._insert_messages(
                c, entry, messages, touch and not session_fields, placed=not queued
            )
            if session_fields:
                values = {"updated_at": now_ms(), **session_fields} if touch else session_fields
                c.execute(update(S).where(S.c.key == entry.key).values(**values))
            return ids

        ids = await self.write(op)
        if messages and not queued:
            await self._mirror_placed(entry, messages)
        return ids

    async def enqueue_message(
        self, entry: SessionEntry, message: TranscriptMessage, run: RunRecord
    ) -> int:
        """Store a user message and the queued run it starts, atomically (one commit); the
        message takes its place in the transcript when the run starts (D13)."""

        def op(c: Connection) -> int:
            (msg_id,) = self._insert_messages(c, entry, [message], True, placed=False)
            run.input_message_id = msg_id
            self._insert_run(c, run)
            return msg_id

        return await self.write(op)

    async def start_run(self, run: RunRecord, entry: SessionEntry) -> None:
        """Mark a run running and place its input message in the transcript, in one commit."""

        def op(c: Connection) -> TranscriptMessage | None:
            st.update_run(c, run.id, {"status": "running", "started_at": run.started_at})
            if run.input_message_id is None:
                return None
            return _place(c, entry.session_id, run.input_message_id)

        placed = await self.write(op)
        if placed is not None:
            await self._mirror_placed(entry, [placed])

    async def place_message(self, entry: SessionEntry, message_id: int) -> None:
        """Place a message that is still waiting (its run ended without starting)."""
        placed = await self.write(lambda c: _place(c, entry.session_id, message_id))
        if placed is not None:
            await self._mirror_placed(entry, [placed])

    async def history(
        self,
        session_id: str,
        *,
        limit: int | None = None,
        include_tools: bool = True,
        up_to_id: int | None = None,
        run_id: str | None = None,
        placed_only: bool = False,
    ) -> list[TranscriptMessage]:
        """The last `limit` messages, oldest first; tool results are filtered before the limit.

        Messages still waiting for their turn come last, in arrival order (D13); `placed_only`
        leaves them out (a turn's model context)."""
        q = st.HISTORY[
            placed_only, include_tools, up_to_id is not None, run_id is not None, limit is not None
        ]
        params = {"b_sid": session_id, "b_up_to": up_to_id, "b_run": run_id, "b_limit": limit}
        rows = await self.read(lambda c: c.execute(q, params).all())
        return [_message(r) for r in reversed(rows)]

    async def context_tail(self, session_id: str, limit: int) -> list[TranscriptMessage]:
        """A turn's model context: the last `limit` placed messages, oldest first, kept warm
        between turns on SQLite (D43). The messages are shared: read them, never mutate them."""
        if self._tails is None:
            return await self.history(session_id, limit=limit, placed_only=True)
        return await self._tails.tail(session_id, limit, self.read, _message)

    async def recent_messages(
        self, session_ids: Iterable[str], per_session: int
    ) -> dict[str, list[TranscriptMessage]]:
        """Last N non-toolResult messages of many sessions in one windowed query."""
        ids = list(session_ids)
        if not ids or per_session <= 0:
            return {}
        rn = func.row_number().over(partition_by=M.c.session_id, order_by=_NEWEST_FIRST)
        inner = (
            select(M.c.session_id, *_MSG_COLS, rn.label("rn"))
            .where(and_(M.c.session_id.in_(ids), M.c.role != "toolResult"))
            .subquery()
        )
        cols = [inner.c.session_id, *(inner.c[c.name] for c in _MSG_COLS)]
        q = select(*cols).where(inner.c.rn <= per_session).order_by(inner.c.rn.desc())
        out: dict[str, list[TranscriptMessage]] = {}
        for r in await self.read(lambda c: c.execute(q).all()):
            out.setdefault(r[0], []).append(_message(r))
        return out

    # ---- runs -----------------------------------------------------------------------------

    @staticmethod
    def _insert_run(c: Connection, run: RunRecord) -> None:
        c.execute(
            st.INSERT_RUN,
            {
                "id": run.id,
                "session_key": run.session_key,
                "status": run.status,
                "lane": run.lane,
                "deliver": run.deliver,
                "input_message_id": run.input_message_id,
                "created_at": run.created_at,
                "meta": run.meta,
                "owner": run.owner,
            },
        )

    async def create_run(self, run: RunRecord) -> None:
        await self.write(lambda c: self._insert_run(c, run))

    async def update_run(self, run_id: str, **fields: Any) -> None:
        if fields:
            await self.write(lambda c: st.update_run(c, run_id, fields))

    async def finish_run(
        self,
        run: RunRecord,
        write: TurnWrite | None,
        *,
        fence_owner: str | None = None,
        **fields: Any,
    ) -> bool:
        """End a run: its final fields and, for a turn that answered, its reply rows, session
        fields and run meta, in one transaction (D41); the transcript mirror follows it.

        `fence_owner` (a cluster, D27): record it only while that process still owns the run
        and it is in flight; False, with nothing written, when a survivor took it over."""
        if write is not None and write.run_meta is not None:
            fields["meta"] = write.run_meta
        if write is not None:
            _check_fields(write.session_fields)

        def op(c: Connection) -> bool:
            if fence_owner is not None:
                if not st.update_run_fenced(c, run.id, fence_owner, fields):
                    return False
            elif fields:
                st.update_run(c, run.id, fields)
            if write is not None:
                self._insert_messages(c, write.entry, write.messages, False)
                st.update_session(
                    c, write.entry.key, {"updated_at": now_ms(), **write.session_fields}
                )
            return True

        if not await self.write(op):
            return False
        if write is not None and write.messages:
            await self._mirror_placed(write.entry, write.messages)
        return True

    async def get_run(self, run_id: str) -> RunRecord | None:
        def op(c: Connection) -> RunRecord | None:
            row = c.execute(st.RUN_BY_ID, {"b_rid": run_id}).mappings().first()
            return RunRecord(**row) if row else None

        return await self.read(op)

    async def last_run(self, session_key: str) -> RunRecord | None:
        q = select(R).where(R.c.session_key == session_key).order_by(R.c.created_at.desc()).limit(1)

        def op(c: Connection) -> RunRecord | None:
            row = c.execute(q).mappings().first()
            return RunRecord(**row) if row else None

        return await self.read(op)

    async def abort_inflight_runs(self, reason: str) -> list[RunRecord]:
        """Mark runs left queued/running by a dead process as aborted; flag their sessions.

        Inputs that were still waiting for their turn take their place now, in arrival order,
        so nothing acknowledged disappears from the transcript."""

        def op(c: Connection) -> tuple[list[RunRecord], list[tuple[str, str]]]:
            q = select(R).where(R.c.status.in_(("queued", "running"))).order_by(R.c.created_at)
            rows = [RunRecord(**r) for r in c.execute(q).mappings().all()]
            touched: list[tuple[str, str]] = []
            if rows:
                keys = sorted({r.session_key for r in rows})
                c.execute(
                    update(R)
                    .where(R.c.id.in_([r.id for r in rows]))
                    .values(status="aborted", ended_at=now_ms(), error=reason)
                )
                c.execute(update(S).where(S.c.key.in_(keys)).values(aborted_last_run=True))
                for r in rows:
                    entry = _session(c, r.session_key)
                    if (
                        entry is not None
                        and r.input_message_id is not None
                        and _place(c, entry.session_id, r.input_message_id) is not None
                    ):
                        touched.append((entry.key, entry.session_id))
            return rows, touched

        rows, touched = await self.write(op)
        for key, _sid in dict.fromkeys(touched):
            entry = await self.get_session(key)
            if entry is not None:
                await self.rebuild_transcript(entry)
        return rows

    async def clear_aborted_last_run(self, session_key: str) -> None:
        await self.write(
            lambda c: c.execute(
                update(S)
                .where(and_(S.c.key == session_key, S.c.aborted_last_run.is_(True)))
                .values(aborted_last_run=False)
            )
        )

    # ---- deliveries -----------------------------------------------------------------------

    async def record_delivery(self, rec: DeliveryRecord) -> int:
        def op(c: Connection) -> int:
            res = c.execute(
                insert(D).values(
                    session_key=rec.session_key,
                    kind=rec.kind,
                    outcome=rec.outcome,
                    reason=rec.reason,
                    channel=rec.channel,
                    to=rec.to,
                    account_id=rec.account_id,
                    thread_id=rec.thread_id,
                    text=rec.text,
                    run_id=rec.run_id,
                    attempts=rec.attempts,
                    created_at=rec.created_at,
                )
            )
            return int(res.inserted_primary_key[0])  # type: ignore[index]

        rec.id = await self.write(op)
        return rec.id

    async def list_deliveries(
        self, *, session_key: str | None = None, outcome: str | None = None, limit: int = 100
    ) -> list[DeliveryRecord]:
        q = select(D)
        if session_key is not None:
            q = q.where(D.c.session_key == session_key)
        if outcome is not None:
            q = q.where(D.c.outcome == outcome)
        q = q.order_by(D.c.id.desc()).limit(limit)
        return await self.read(
            lambda c: [DeliveryRecord(**r) for r in c.execute(q).mappings().all()]
        )
