"""The one store API: sessions, transcripts, runs and deliveries.

Every query is indexed and set-based: listing sessions with their last messages is two queries
whatever the number of sessions (a window function replaces per-row history calls).
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import fields
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import and_, delete, func, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from core.store.engine import is_sqlite, make_engine, upgrade
from core.store.entries import (
    SESSION_FIELDS,
    DeliveryRecord,
    RunRecord,
    SessionEntry,
    SessionQuery,
    TranscriptMessage,
)
from core.store.tables import DeliveryRow, MessageRow, RunRow, SessionRow

S = SessionRow.__table__  # type: ignore[attr-defined]
M = MessageRow.__table__  # type: ignore[attr-defined]
R = RunRow.__table__  # type: ignore[attr-defined]
D = DeliveryRow.__table__  # type: ignore[attr-defined]

_SESSION_COLS = tuple(S.c[f.name] for f in fields(SessionEntry))
_MSG_COLS = (
    M.c.id, M.c.role, M.c.content, M.c.timestamp, M.c.tool_call_id, M.c.tool_name,
    M.c.is_error, M.c.run_id, M.c.meta,
)


def now_ms() -> int:
    return int(time.time() * 1000)


class StoreError(Exception):
    """A store operation was refused (unknown session, label in use, ...)."""


def _glob_to_like(pattern: str) -> str:
    escaped = pattern.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped.replace("*", "%")


def _message(row: Any) -> TranscriptMessage:
    return TranscriptMessage(
        role=row.role, content=row.content, timestamp=row.timestamp,
        tool_call_id=row.tool_call_id, tool_name=row.tool_name, is_error=row.is_error,
        run_id=row.run_id, meta=row.meta, id=row.id,
    )


class Store:
    """Async facade over SQLite or PostgreSQL; transcripts are mirrored to JSONL files."""

    def __init__(self, url: str, state_dir: Path) -> None:
        self.url = url
        self.state_dir = state_dir
        self.transcripts_dir = state_dir / "transcripts"
        self.engine: AsyncEngine = make_engine(url)

    async def open(self, *, migrate: bool = True) -> None:
        self.transcripts_dir.mkdir(parents=True, exist_ok=True)
        if migrate:
            await upgrade(self.url)

    async def close(self) -> None:
        await self.engine.dispose()

    @property
    def dialect(self) -> str:
        return "sqlite" if is_sqlite(self.url) else "postgresql"

    def transcript_path(self, session_id: str) -> Path:
        return self.transcripts_dir / f"{session_id}.jsonl"

    # ---- sessions -------------------------------------------------------------------------

    async def get_session(self, key: str) -> SessionEntry | None:
        async with self.engine.connect() as conn:
            row = (await conn.execute(select(S).where(S.c.key == key))).mappings().first()
        return SessionEntry(**row) if row else None

    async def get_session_by_id(self, session_id: str) -> SessionEntry | None:
        async with self.engine.connect() as conn:
            q = select(S).where(S.c.session_id == session_id)
            row = (await conn.execute(q)).mappings().first()
        return SessionEntry(**row) if row else None

    async def ensure_session(self, key: str, *, agent_id: str, kind: str, **fields: Any
                             ) -> SessionEntry:
        """Return the session, creating it with `fields` when it does not exist yet."""
        entry = await self.get_session(key)
        if entry is not None:
            return entry
        now = now_ms()
        values = {"key": key, "agent_id": agent_id, "kind": kind, "session_id": str(uuid.uuid4()),
                  "created_at": now, "updated_at": now, **fields}
        self._check_fields(values)
        async with self.engine.begin() as conn:
            try:
                await conn.execute(insert(S).values(**values))
            except Exception:
                await conn.rollback()
                existing = await self.get_session(key)
                if existing is None:
                    raise
                return existing
        return SessionEntry(**{**{f: None for f in SESSION_FIELDS}, **values})

    async def update_session(self, key: str, *, touch: bool = True, **fields: Any
                             ) -> SessionEntry:
        """Patch fields of one session; `touch` bumps `updatedAt` (the list order)."""
        self._check_fields(fields)
        if touch:
            fields.setdefault("updated_at", now_ms())
        async with self.engine.begin() as conn:
            if fields:
                res = await conn.execute(update(S).where(S.c.key == key).values(**fields))
                if res.rowcount == 0:
                    raise StoreError(f"Unknown session: {key}")
            row = (await conn.execute(select(S).where(S.c.key == key))).mappings().first()
        if row is None:
            raise StoreError(f"Unknown session: {key}")
        return SessionEntry(**row)

    async def set_label(self, key: str, label: str | None) -> SessionEntry:
        """Labels are unique across the store so `sessions_send {label}` finds one session."""
        if label is not None:
            async with self.engine.connect() as conn:
                q = select(S.c.key).where(and_(S.c.label == label, S.c.key != key)).limit(1)
                if (await conn.execute(q)).first() is not None:
                    raise StoreError(f"label already in use: {label}")
        return await self.update_session(key, label=label)

    async def delete_session(self, key: str) -> bool:
        """Remove a session and its transcript rows; the JSONL file is renamed, not erased."""
        entry = await self.get_session(key)
        if entry is None:
            return False
        async with self.engine.begin() as conn:
            await conn.execute(delete(M).where(M.c.session_key == key))
            await conn.execute(delete(S).where(S.c.key == key))
        path = self.transcript_path(entry.session_id)
        if path.exists():
            stamp = time.strftime("%Y-%m-%dT%H-%M-%S", time.gmtime())
            path.rename(path.with_name(f"{path.name}.deleted.{stamp}"))
        return True

    async def list_sessions(self, query: SessionQuery) -> list[SessionEntry]:
        q = select(*_SESSION_COLS)
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
        if conds:
            q = q.where(and_(*conds))
        q = q.order_by(S.c.updated_at.desc(), S.c.key)
        if query.limit is not None:
            q = q.limit(query.limit)
        async with self.engine.connect() as conn:
            rows = (await conn.execute(q)).all()
        return [SessionEntry(*r) for r in rows]

    async def find_sessions(self, text: str, *, spawned_by: str | None = None,
                            limit: int = 8) -> list[SessionEntry]:
        """Substring match on key, sessionId, label or display name (sessionId resolution)."""
        like = f"%{text.lower()}%"
        conds = [or_(func.lower(S.c.key).like(like), func.lower(S.c.session_id).like(like),
                     func.lower(S.c.label).like(like), func.lower(S.c.display_name).like(like))]
        if spawned_by is not None:
            conds.append(S.c.spawned_by == spawned_by)
        q = select(S).where(and_(*conds)).order_by(S.c.updated_at.desc()).limit(limit)
        async with self.engine.connect() as conn:
            rows = (await conn.execute(q)).mappings().all()
        return [SessionEntry(**r) for r in rows]

    async def find_by_label(self, label: str, *, agent_id: str | None = None,
                            spawned_by: str | None = None, limit: int = 2
                            ) -> list[SessionEntry]:
        conds = [S.c.label == label]
        if agent_id is not None:
            conds.append(S.c.agent_id == agent_id)
        if spawned_by is not None:
            conds.append(S.c.spawned_by == spawned_by)
        q = select(S).where(and_(*conds)).order_by(S.c.updated_at.desc()).limit(limit)
        async with self.engine.connect() as conn:
            rows = (await conn.execute(q)).mappings().all()
        return [SessionEntry(**r) for r in rows]

    # ---- transcripts ----------------------------------------------------------------------

    async def append_messages(self, entry: SessionEntry, messages: Sequence[TranscriptMessage],
                              *, touch: bool = True) -> list[int]:
        """Store messages in order, mirror them to the JSONL transcript, bump `updatedAt`."""
        if not messages:
            return []
        ids: list[int] = []
        async with self.engine.begin() as conn:
            for m in messages:
                res = await conn.execute(insert(M).values(
                    session_key=entry.key, session_id=entry.session_id, role=m.role,
                    content=m.content, timestamp=m.timestamp, tool_call_id=m.tool_call_id,
                    tool_name=m.tool_name, is_error=m.is_error, run_id=m.run_id, meta=m.meta,
                ))
                m.id = int(res.inserted_primary_key[0])  # type: ignore[index]
                ids.append(m.id)
            if touch:
                await conn.execute(
                    update(S).where(S.c.key == entry.key).values(updated_at=now_ms()))
        with self.transcript_path(entry.session_id).open("a", encoding="utf-8") as fh:
            for m in messages:
                fh.write(json.dumps(m.to_wire(), ensure_ascii=False) + "\n")
        return ids

    async def history(self, session_id: str, *, limit: int | None = None,
                      include_tools: bool = True, up_to_id: int | None = None
                      ) -> list[TranscriptMessage]:
        """The last `limit` messages, oldest first; tool results are filtered before the limit."""
        q = select(*_MSG_COLS).where(M.c.session_id == session_id)
        if not include_tools:
            q = q.where(M.c.role != "toolResult")
        if up_to_id is not None:
            q = q.where(M.c.id <= up_to_id)
        q = q.order_by(M.c.id.desc())
        if limit is not None:
            q = q.limit(limit)
        async with self.engine.connect() as conn:
            rows = (await conn.execute(q)).all()
        return [_message(r) for r in reversed(rows)]

    async def recent_messages(self, session_ids: Iterable[str], per_session: int
                              ) -> dict[str, list[TranscriptMessage]]:
        """Last N non-toolResult messages of many sessions in one windowed query."""
        ids = list(session_ids)
        if not ids or per_session <= 0:
            return {}
        rn = func.row_number().over(partition_by=M.c.session_id, order_by=M.c.id.desc())
        inner = (select(M.c.session_id, *_MSG_COLS, rn.label("rn"))
                 .where(and_(M.c.session_id.in_(ids), M.c.role != "toolResult")).subquery())
        q = select(inner).where(inner.c.rn <= per_session).order_by(inner.c.id)
        out: dict[str, list[TranscriptMessage]] = {}
        async with self.engine.connect() as conn:
            for r in (await conn.execute(q)).all():
                out.setdefault(r.session_id, []).append(_message(r))
        return out

    # ---- runs -----------------------------------------------------------------------------

    async def create_run(self, run: RunRecord) -> None:
        async with self.engine.begin() as conn:
            await conn.execute(insert(R).values(
                id=run.id, session_key=run.session_key, status=run.status, lane=run.lane,
                deliver=run.deliver, input_message_id=run.input_message_id,
                created_at=run.created_at, meta=run.meta,
            ))

    async def update_run(self, run_id: str, **fields: Any) -> None:
        async with self.engine.begin() as conn:
            await conn.execute(update(R).where(R.c.id == run_id).values(**fields))

    async def get_run(self, run_id: str) -> RunRecord | None:
        async with self.engine.connect() as conn:
            row = (await conn.execute(select(R).where(R.c.id == run_id))).mappings().first()
        return RunRecord(**row) if row else None

    async def last_run(self, session_key: str) -> RunRecord | None:
        q = select(R).where(R.c.session_key == session_key).order_by(
            R.c.created_at.desc()).limit(1)
        async with self.engine.connect() as conn:
            row = (await conn.execute(q)).mappings().first()
        return RunRecord(**row) if row else None

    async def abort_inflight_runs(self, reason: str) -> list[RunRecord]:
        """Mark runs left queued/running by a dead process as aborted; flag their sessions."""
        async with self.engine.begin() as conn:
            q = select(R).where(R.c.status.in_(("queued", "running")))
            rows = [RunRecord(**r) for r in (await conn.execute(q)).mappings().all()]
            if rows:
                ids = [r.id for r in rows]
                keys = sorted({r.session_key for r in rows})
                await conn.execute(update(R).where(R.c.id.in_(ids)).values(
                    status="aborted", ended_at=now_ms(), error=reason))
                await conn.execute(update(S).where(S.c.key.in_(keys)).values(
                    aborted_last_run=True))
        return rows

    # ---- deliveries -----------------------------------------------------------------------

    async def record_delivery(self, rec: DeliveryRecord) -> int:
        async with self.engine.begin() as conn:
            res = await conn.execute(insert(D).values(
                session_key=rec.session_key, kind=rec.kind, outcome=rec.outcome,
                reason=rec.reason, channel=rec.channel, to=rec.to, account_id=rec.account_id,
                thread_id=rec.thread_id, text=rec.text, run_id=rec.run_id,
                attempts=rec.attempts, created_at=rec.created_at,
            ))
        rec.id = int(res.inserted_primary_key[0])  # type: ignore[index]
        return rec.id

    async def list_deliveries(self, *, session_key: str | None = None,
                              outcome: str | None = None, limit: int = 100
                              ) -> list[DeliveryRecord]:
        q = select(D)
        if session_key is not None:
            q = q.where(D.c.session_key == session_key)
        if outcome is not None:
            q = q.where(D.c.outcome == outcome)
        q = q.order_by(D.c.id.desc()).limit(limit)
        async with self.engine.connect() as conn:
            rows = (await conn.execute(q)).mappings().all()
        return [DeliveryRecord(**r) for r in rows]

    @staticmethod
    def _check_fields(fields: dict[str, Any]) -> None:
        unknown = set(fields) - SESSION_FIELDS
        if unknown:
            raise StoreError(f"unknown session fields: {', '.join(sorted(unknown))}")
