"""Paused runs and their questions (table `approvals`): one aggregate of the store (D72, D73).

Pausing is one transaction: the run becomes `awaiting_approval` (fenced to its owner in a
cluster, D27) with its partial turn in its meta, and its questions are inserted. Deciding is one
transaction too: the run's row is locked, the question changes only while `pending`, and when
it was the run's last one the run goes back to `queued` for the decider's process. So a
question is decided once and a run resumes once, whichever process or button comes first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, and_, func, insert, select, update

from core.model.approvals import AWAITING, Approval, RequestRef
from core.model.records import RunRecord
from core.store.approvals_tables import ApprovalRow
from core.store.database import Database
from core.store.tables import RunRow

A = ApprovalRow.__table__  # type: ignore[attr-defined]
R = RunRow.__table__  # type: ignore[attr-defined]
TIMED_OUT = frozenset({"expired", "timeout"})
"""What the clock decides (an approval's, a question's); every other status is a person's."""


@dataclass(slots=True)
class Decision:
    """A question decided now; `resumed` is its run when this decision was the run's last."""

    approval: Approval
    resumed: RunRecord | None = None


def _approval(row: Any) -> Approval:
    d = dict(row)
    d["requests"] = [RequestRef.from_wire(r) for r in d.get("requests") or []]
    return Approval(**d)


def _row(a: Approval) -> dict[str, Any]:
    return {
        "id": a.id,
        "kind": a.kind,
        "run_id": a.run_id,
        "tool_call_id": a.tool_call_id,
        "tool": a.tool,
        "arguments": a.arguments,
        "session_key": a.session_key,
        "requester": a.requester,
        "created_at": a.created_at,
        "expires_at": a.expires_at,
        "status": a.status,
        "requests": [r.to_wire() for r in a.requests],
    }


class ApprovalsStore(Database):
    async def pause_run(
        self,
        run_id: str,
        meta: dict[str, Any],
        questions: Sequence[Approval],
        *,
        fence_owner: str | None = None,
    ) -> bool:
        """The run waits for its questions; False (nothing written) when a survivor took it
        over meanwhile (D27)."""

        def op(c: Connection) -> bool:
            cond = [R.c.id == run_id, R.c.status.in_(("queued", "running"))]
            if fence_owner is not None:
                cond.append(R.c.owner == fence_owner)
            done = c.execute(update(R).where(and_(*cond)).values(status=AWAITING, meta=meta))
            if not done.rowcount:
                return False
            for q in questions:
                c.execute(insert(A).values(**_row(q)))
            return True

        return bool(await self.write(op))

    async def question(self, approval_id: str) -> Approval | None:
        q = select(A).where(A.c.id == approval_id)
        row = await self.read(lambda c: c.execute(q).mappings().first())
        return _approval(row) if row else None

    async def questions(
        self,
        *,
        status: str | None = "pending",
        kind: str | None = None,
        session_key: str | None = None,
        run_id: str | None = None,
        limit: int = 200,
    ) -> list[Approval]:
        q = select(A)
        if status is not None:
            q = q.where(A.c.status == status)
        if kind is not None:
            q = q.where(A.c.kind == kind)
        if session_key is not None:
            q = q.where(A.c.session_key == session_key)
        if run_id is not None:
            q = q.where(A.c.run_id == run_id)
        q = q.order_by(A.c.created_at, A.c.id).limit(limit)
        rows = await self.read(lambda c: c.execute(q).mappings().all())
        return [_approval(r) for r in rows]

    async def due_questions(self, now: int, limit: int = 100) -> list[Approval]:
        """Pending questions whose time is up (any process may expire them, once)."""
        q = (
            select(A)
            .where(and_(A.c.status == "pending", A.c.expires_at <= now))
            .order_by(A.c.expires_at)
            .limit(limit)
        )
        rows = await self.read(lambda c: c.execute(q).mappings().all())
        return [_approval(r) for r in rows]

    async def set_question_requests(self, approval_id: str, requests: list[RequestRef]) -> None:
        wire = [r.to_wire() for r in requests]
        await self.write(
            lambda c: c.execute(update(A).where(A.c.id == approval_id).values(requests=wire))
        )

    async def decide_question(
        self,
        approval_id: str,
        status: str,
        *,
        by: str | None,
        now: int,
        owner: str | None,
        answer: str | None = None,
    ) -> Decision | None:
        """Decide a pending question; None when it is unknown, already decided or, for a
        person's decision, past its `expires_at` (the sweep expires it, D187). The run
        goes back to `queued` (owner := `owner`) with its last question decided."""

        def op(c: Connection) -> Decision | None:
            found = c.execute(select(A.c.run_id).where(A.c.id == approval_id)).first()
            if found is None:
                return None
            run_id = found[0]
            lock = select(R.c.id).where(R.c.id == run_id)
            if c.dialect.name == "postgresql":
                lock = lock.with_for_update()
            c.execute(lock)  # deciders of one run take turns (the last one resumes it)
            cond = [A.c.id == approval_id, A.c.status == "pending"]
            if status not in TIMED_OUT:  # a press after the time is up is too late (D187)
                cond.append(A.c.expires_at > now)
            done = c.execute(
                update(A)
                .where(and_(*cond))
                .values(status=status, decided_at=now, decided_by=by, answer=answer)
            )
            if not done.rowcount:
                return None
            row = c.execute(select(A).where(A.c.id == approval_id)).mappings().first()
            decision = Decision(_approval(row))
            left = c.execute(
                select(func.count())
                .select_from(A)
                .where(and_(A.c.run_id == run_id, A.c.status == "pending"))
            ).scalar_one()
            if left:
                return decision
            resumed = c.execute(
                update(R)
                .where(and_(R.c.id == run_id, R.c.status == AWAITING))
                .values(status="queued", owner=owner)
            )
            if resumed.rowcount:
                run = c.execute(select(R).where(R.c.id == run_id)).mappings().first()
                decision.resumed = RunRecord(**run) if run else None
            return decision

        return await self.write(op)

    async def paused_runs(self) -> list[RunRecord]:
        q = select(R).where(R.c.status == AWAITING).order_by(R.c.created_at)
        rows = await self.read(lambda c: c.execute(q).mappings().all())
        return [RunRecord(**r) for r in rows]
