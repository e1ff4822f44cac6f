"""The persisted sub-agent registry (table `subagent_runs`, R4.8): one aggregate of the store.

The announce guard is a conditional UPDATE, so "announce exactly once" holds across completion
paths and across a restart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any, TypedDict, Unpack

from sqlalchemy import Connection, and_, delete, insert, or_, select, update

from core.model.delivery_context import DeliveryContext, normalize_delivery_context
from core.store.database import Database
from core.store.tables import RunRow, SubagentRunRow
from core.store.yield_tables import SessionYieldRow

T = SubagentRunRow.__table__  # type: ignore[attr-defined]
Y = SessionYieldRow.__table__  # type: ignore[attr-defined]
R = RunRow.__table__  # type: ignore[attr-defined]

# announce_state values: `pending` (not announced yet), `running` (claimed by this process),
# `done` (posted), `skipped` (ANNOUNCE_SKIP), `stopped` (the user stopped the run: no announce).
ANNOUNCE_FINAL_STATES: frozenset[str] = frozenset({"done", "skipped", "stopped"})


@dataclass(slots=True)
class SubagentRecord:
    run_id: str
    child_key: str
    requester_key: str
    task: str
    created_at: int
    requester_origin: dict[str, Any] | None = None
    label: str | None = None
    cleanup: str = "keep"
    model: str | None = None
    trace_id: str | None = None
    hops: int = 0
    started_at: int | None = None
    ended_at: int | None = None
    outcome: str | None = None
    error: str | None = None
    reply: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    archive_at: int | None = None
    announce_state: str = "pending"
    announced_at: int | None = None
    role: str | None = None
    """The requester's role (D60); the announce step runs with it (None: guest)."""
    sender: str | None = None
    """The requester's sender, person, group and automated flag (D63, D64, D81): the
    announce step runs with them too, as the child's other runs do (D149)."""
    person_id: str | None = None
    group_id: str | None = None
    automated: bool | None = None

    @property
    def origin(self) -> DeliveryContext | None:
        """The requester's delivery context, frozen when the sub-agent was spawned (D6)."""
        return normalize_delivery_context(self.requester_origin)

    @property
    def finished(self) -> bool:
        return self.outcome is not None

    @staticmethod
    def origin_json(origin: DeliveryContext | None) -> dict[str, Any] | None:
        return origin.model_dump() if origin is not None and not origin.is_empty() else None


_FIELDS = frozenset(f.name for f in fields(SubagentRecord))


class SubagentPatch(TypedDict, total=False):
    """The record fields a write may set (D96)."""

    started_at: int | None
    ended_at: int | None
    outcome: str | None
    error: str | None
    reply: str | None
    input_tokens: int | None
    output_tokens: int | None
    total_tokens: int | None
    archive_at: int | None
    announce_state: str
    announce_owner: str | None
    announced_at: int | None


def _record(row: Any) -> SubagentRecord:
    return SubagentRecord(**{k: v for k, v in dict(row).items() if k in _FIELDS})


class SubagentStore(Database):
    async def insert_subagent_run(self, rec: SubagentRecord) -> None:
        await self.write(lambda c: c.execute(insert(T).values(**asdict(rec))))

    async def get_subagent_run(self, run_id: str) -> SubagentRecord | None:
        row = await self.read(
            lambda c: c.execute(select(T).where(T.c.run_id == run_id)).mappings().first()
        )
        return _record(row) if row else None

    async def list_subagent_runs(
        self,
        *,
        requester_key: str | None = None,
        unfinished: bool = False,
        announce_states: tuple[str, ...] = (),
    ) -> list[SubagentRecord]:
        """Records oldest first (the `/subagents list` numbering)."""
        conds = []
        if requester_key is not None:
            conds.append(T.c.requester_key == requester_key)
        if unfinished:
            conds.append(T.c.outcome.is_(None))
        if announce_states:
            conds.append(T.c.announce_state.in_(announce_states))
        q = select(T)
        if conds:
            q = q.where(and_(*conds))
        q = q.order_by(T.c.created_at, T.c.run_id)
        rows = await self.read(lambda c: c.execute(q).mappings().all())
        return [_record(r) for r in rows]

    async def update_subagent_run(self, run_id: str, **values: Unpack[SubagentPatch]) -> None:
        unknown = set(values) - _FIELDS
        if unknown:
            raise ValueError(f"unknown subagent run fields: {', '.join(sorted(unknown))}")
        await self.write(
            lambda c: c.execute(update(T).where(T.c.run_id == run_id).values(**values))
        )

    async def transition_announce(
        self,
        run_id: str,
        from_states: tuple[str, ...],
        to_state: str,
        **values: Unpack[SubagentPatch],
    ) -> bool:
        """Move `announce_state` only if it is in `from_states`; True when this call moved it."""
        stmt = (
            update(T)
            .where(and_(T.c.run_id == run_id, T.c.announce_state.in_(from_states)))
            .values(announce_state=to_state, **values)
        )
        return bool(await self.write(lambda c: c.execute(stmt).rowcount))

    async def release_stale_claims(self, live: Sequence[str] | None = None) -> int:
        """Announces claimed by a process that died become pending again (called at start).

        `live`: the processes still alive (D29), whose claims stay; None: release every claim."""
        cond = T.c.announce_state == "running"
        if live is not None:
            cond = and_(cond, or_(T.c.announce_owner.is_(None), T.c.announce_owner.not_in(live)))
        stmt = update(T).where(cond).values(announce_state="pending")
        return int(await self.write(lambda c: c.execute(stmt).rowcount) or 0)

    async def due_for_archive(self, now: int) -> list[SubagentRecord]:
        """Finished, announced records whose `archiveAt` has passed."""
        q = select(T).where(
            and_(
                T.c.archive_at.is_not(None),
                T.c.archive_at <= now,
                T.c.outcome.is_not(None),
                T.c.announce_state.in_(tuple(ANNOUNCE_FINAL_STATES)),
            )
        )
        rows = await self.read(lambda c: c.execute(q.order_by(T.c.archive_at)).mappings().all())
        return [_record(r) for r in rows]

    async def delete_subagent_run(self, run_id: str) -> None:
        await self.write(lambda c: c.execute(delete(T).where(T.c.run_id == run_id)))

    # ---- sessions_yield (D69, D112) ----------------------------------------------------------

    async def yield_session(
        self, session_key: str, *, run_id: str | None, context: dict[str, Any], at: int
    ) -> None:
        """The session's next turn is the next announce or message: remember the run that
        yielded (None: the session's newest run, for a call without a turn) and who it ran for."""

        def op(c: Connection) -> None:
            rid = run_id if run_id is not None else _newest_run(c, session_key)
            c.execute(delete(Y).where(Y.c.session_key == session_key))
            c.execute(
                insert(Y).values(
                    session_key=session_key, run_id=rid, yielded_at=at, context=context
                )
            )

        await self.write(op)

    async def take_yield(self, session_key: str) -> dict[str, Any] | None:
        """The yielding turn's context, once: None when the session did not yield, another
        announce took it first, or a message started a turn since (it was the next turn)."""

        def op(c: Connection) -> dict[str, Any] | None:
            row = c.execute(select(Y).where(Y.c.session_key == session_key)).mappings().first()
            if row is None:
                return None
            taken = c.execute(
                delete(Y).where(
                    and_(Y.c.session_key == session_key, Y.c.yielded_at == row["yielded_at"])
                )
            ).rowcount
            if not taken or _newest_run(c, session_key) != row["run_id"]:
                return None
            return dict(row["context"])

        return await self.write(op)

    async def forget_yield(self, session_key: str) -> None:
        await self.write(lambda c: c.execute(delete(Y).where(Y.c.session_key == session_key)))


def _newest_run(c: Connection, session_key: str) -> str | None:
    q = select(R.c.id).where(R.c.session_key == session_key)
    return c.execute(q.order_by(R.c.created_at.desc(), R.c.id.desc()).limit(1)).scalar()
