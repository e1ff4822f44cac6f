"""Sessions (table `sessions`): create, read, patch, label, list and delete."""

from __future__ import annotations

import time
import uuid
from collections.abc import Collection, Mapping
from typing import Any, Unpack

from sqlalchemy import Connection, and_, delete, func, or_, select, update

import core.store.hot as hot
import core.store.statements as st
from core.model.records import SESSION_FIELDS, SessionEntry, SessionPatch, SessionQuery
from core.store.database import Database, StoreError, insert_ignore, now_ms
from core.store.search_index import forget_session
from core.store.tables import MessageRow, SessionRow
from core.store.yield_tables import SessionYieldRow

S = SessionRow.__table__  # type: ignore[attr-defined]
M = MessageRow.__table__  # type: ignore[attr-defined]
Y = SessionYieldRow.__table__  # type: ignore[attr-defined]

_SESSION_COLS = st.SESSION_COLS


def _glob_to_like(pattern: str) -> str:
    escaped = pattern.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped.replace("*", "%")


def route_query(
    channel: str, to: str, account_id: str | None, skip_kinds: Collection[str] = ()
) -> Any:
    """The sessions whose replies go to one chat, by `ix_sessions_route` (h28r)."""
    conds = [S.c.last_channel == channel, S.c.last_to == to]
    if account_id is not None:
        conds.append(or_(S.c.last_account_id.is_(None), S.c.last_account_id == account_id))
    if skip_kinds:
        conds.append(S.c.kind.not_in(list(skip_kinds)))
    return select(*_SESSION_COLS).where(and_(*conds)).order_by(S.c.key)


def session_by_key(conn: Connection, key: str) -> SessionEntry | None:
    row = hot.first(conn, st.SESSION_BY_KEY, {"b_key": key})
    return SessionEntry(*row) if row else None


def check_fields(values: Mapping[str, Any]) -> None:
    unknown = set(values) - SESSION_FIELDS
    if unknown:
        raise StoreError(f"unknown session fields: {', '.join(sorted(unknown))}")


def _matches_text(text: str) -> Any:
    """Substring (any case) of a session's key, sessionId, label or display name."""
    like = f"%{text.lower()}%"
    return or_(
        func.lower(S.c.key).like(like),
        func.lower(S.c.session_id).like(like),
        func.lower(S.c.label).like(like),
        func.lower(S.c.display_name).like(like),
    )


def session_conditions(query: SessionQuery) -> list[Any]:
    """The WHERE conditions of a session query on `sessions` (every filter but `limit`): one
    place, so listing and searching a session's messages scope alike (D61, D66)."""
    conds: list[Any] = []
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
    if query.keys is not None:
        conds.append(S.c.key.in_(query.keys) if query.keys else S.c.key.is_(None))
    if not query.include_reserved:
        conds.append(S.c.key.not_in(("global", "unknown")))
    if query.exclude_keys:
        conds.append(S.c.key.not_in(query.exclude_keys))
    if query.channels:
        conds.append(func.coalesce(S.c.channel, S.c.last_channel).in_(query.channels))
    if query.text:
        conds.append(_matches_text(query.text))
    return conds


class SessionsStore(Database):
    async def get_session(self, key: str) -> SessionEntry | None:
        return await self.read(lambda c: session_by_key(c, key))

    async def get_session_by_id(self, session_id: str) -> SessionEntry | None:
        def op(c: Connection) -> SessionEntry | None:
            row = c.execute(select(*_SESSION_COLS).where(S.c.session_id == session_id)).first()
            return SessionEntry(*row) if row else None

        return await self.read(op)

    async def ensure_session(
        self, key: str, *, agent_id: str, kind: str, **fields: Unpack[SessionPatch]
    ) -> SessionEntry:
        """Return the session, creating it with `fields` when it does not exist yet."""
        found = await self.read(lambda c: session_by_key(c, key))
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
        check_fields(values)

        def op(c: Connection) -> SessionEntry:
            # an upsert, not select-then-insert: simultaneous first messages into a new session
            # (many HTTP requests, web-chat sockets) must all find the one row
            insert_ignore(c, S, values, ["key"])
            entry = session_by_key(c, key)
            assert entry is not None
            return entry

        return await self.write(op)

    async def update_session(
        self, key: str, *, touch: bool = True, **fields: Unpack[SessionPatch]
    ) -> SessionEntry:
        """Patch fields of one session; `touch` bumps `updatedAt` (the list order)."""
        check_fields(fields)
        if touch:
            fields.setdefault("updated_at", now_ms())

        def op(c: Connection) -> SessionEntry:
            if fields and c.execute(update(S).where(S.c.key == key).values(**fields)).rowcount == 0:
                raise StoreError(f"Unknown session: {key}")
            entry = session_by_key(c, key)
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
            entry = session_by_key(c, key)
            if entry is not None:
                forget_session(c, key)
                c.execute(delete(M).where(M.c.session_key == key))
                c.execute(delete(Y).where(Y.c.session_key == key))  # D69
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
        conds = session_conditions(query)
        q = select(*_SESSION_COLS)
        if conds:
            q = q.where(and_(*conds))
        q = q.order_by(S.c.updated_at.desc(), S.c.key)
        if query.limit is not None:
            q = q.limit(query.limit)
        return await self.read(lambda c: [SessionEntry(*r) for r in c.execute(q)])

    async def session_tree(self, root: str, *, max_sessions: int = 10_000) -> list[str]:
        """`root` and every session spawned from it, transitively (D61's `tree`), in one read;
        `max_sessions` bounds a pathological tree."""

        def op(c: Connection) -> list[str]:
            seen, frontier = {root}, [root]
            order = [root]
            while frontier and len(order) < max_sessions:
                rows = c.execute(select(S.c.key).where(S.c.spawned_by.in_(frontier))).all()
                frontier = [k for (k,) in rows if k not in seen]
                seen.update(frontier)
                order.extend(frontier)
            return order[:max_sessions]

        return await self.read(op)

    async def find_sessions(
        self, text: str, *, spawned_by: str | None = None, limit: int = 8
    ) -> list[SessionEntry]:
        """Substring match on key, sessionId, label or display name (sessionId resolution)."""
        conds = [_matches_text(text)]
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

    async def sessions_at_route(
        self,
        channel: str,
        to: str,
        account_id: str | None = None,
        *,
        skip_kinds: Collection[str] = (),
    ) -> list[SessionEntry]:
        """The sessions whose replies go to one chat (channel and `to`; an account when both
        name one): whose send policy a delivery into that chat must obey (D140). All of them,
        `skip_kinds` left out in the query: a cut-off list let 64 `hook:<uuid>` sessions
        pointed at a chat hide its `/send off` (D177)."""
        q = route_query(channel, to, account_id, skip_kinds)
        return await self.read(lambda c: [SessionEntry(*r) for r in c.execute(q)])
