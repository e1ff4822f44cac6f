"""Cron jobs (table `cron_jobs`): one aggregate of the store (D96).

Claiming due jobs is one conditional UPDATE … RETURNING: whoever sets `running_since` owns the
firing, so a job never overlaps itself, even with several schedulers on one database.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any, TypedDict, Unpack

from sqlalchemy import and_, case, delete, func, insert, or_, select, update
from sqlalchemy.exc import IntegrityError

from core.store.cron_tables import CronJobRow
from core.store.database import Database

J = CronJobRow.__table__  # type: ignore[attr-defined]
HISTORY = 20


@dataclass(slots=True)
class CronJobRecord:
    id: str
    agent_id: str
    spec: dict[str, Any]
    source: str
    created_at: int
    updated_at: int
    enabled: bool = True
    owner_session: str | None = None
    creator: str | None = None
    creator_role: str | None = None
    """The creator's role, person and group when the job was made: its turns run as them (D176)."""
    creator_person: str | None = None
    creator_group: str | None = None
    next_run_at: int | None = None
    running_since: int | None = None
    last_run_at: int | None = None
    last_status: str | None = None
    last_error: str | None = None
    runs: list[dict[str, Any]] | None = None


class CronJobPatch(TypedDict, total=False):
    """The job fields a write may set (D96)."""

    agent_id: str
    spec: dict[str, Any]
    source: str
    owner_session: str | None
    creator: str | None
    creator_role: str | None
    creator_person: str | None
    creator_group: str | None
    updated_at: int
    enabled: bool
    next_run_at: int | None
    running_since: int | None
    last_run_at: int | None
    last_status: str | None
    last_error: str | None
    runs: list[dict[str, Any]] | None


_FIELDS = frozenset(f.name for f in fields(CronJobRecord))


def _record(row: Any) -> CronJobRecord:
    return CronJobRecord(**{k: v for k, v in dict(row).items() if k in _FIELDS})


class CronStore(Database):
    async def insert_job(self, rec: CronJobRecord) -> bool:
        """Insert a new job; False when the id is taken."""
        try:
            await self.write(lambda c: c.execute(insert(J).values(**asdict(rec))))
        except IntegrityError:
            return False
        return True

    async def get_job(self, job_id: str) -> CronJobRecord | None:
        row = await self.read(
            lambda c: c.execute(select(J).where(J.c.id == job_id)).mappings().first()
        )
        return _record(row) if row else None

    async def list_jobs(self, *, owner_session: str | None = None) -> list[CronJobRecord]:
        q = select(J)
        if owner_session is not None:
            q = q.where(J.c.owner_session == owner_session)
        rows = await self.read(lambda c: c.execute(q.order_by(J.c.id)).mappings().all())
        return [_record(r) for r in rows]

    async def count_jobs(self, owner_session: str) -> int:
        q = select(func.count()).select_from(J).where(J.c.owner_session == owner_session)
        return int(await self.read(lambda c: c.execute(q).scalar_one()))

    async def count_agent_jobs(self, creator: str | None = None) -> int:
        """Jobs agents made, across every session (D81's global cap), or those one person's
        messages made (the cap per creator)."""
        cond = J.c.source == "agent"
        if creator is not None:
            cond = and_(cond, J.c.creator == creator)
        q = select(func.count()).select_from(J).where(cond)
        return await self.read(lambda c: int(c.execute(q).scalar() or 0))

    async def disable_jobs_of(self, creator: str, now: int, reason: str) -> int:
        """Stop every enabled job `creator` made (their approval was revoked, D81)."""
        q = (
            update(J)
            .where(and_(J.c.creator == creator, J.c.enabled.is_(True)))
            .values(enabled=False, updated_at=now, last_error=reason)
        )

        def op(c: Any) -> int:
            return int(c.execute(q).rowcount or 0)

        return await self.write(op)

    async def update_job(self, job_id: str, **values: Unpack[CronJobPatch]) -> CronJobRecord | None:
        unknown = set(values) - _FIELDS
        if unknown:
            raise ValueError(f"unknown cron job fields: {', '.join(sorted(unknown))}")

        def op(c: Any) -> CronJobRecord | None:
            c.execute(update(J).where(J.c.id == job_id).values(**values))
            row = c.execute(select(J).where(J.c.id == job_id)).mappings().first()
            return _record(row) if row else None

        return await self.write(op)

    async def delete_job(self, job_id: str) -> bool:
        return bool(
            await self.write(lambda c: c.execute(delete(J).where(J.c.id == job_id)).rowcount)
        )

    async def claim_due(self, now: int, owner: str | None = None) -> list[CronJobRecord]:
        """Claim every enabled, idle job whose time has come, in one statement."""
        stmt = (
            update(J)
            .where(
                and_(
                    J.c.enabled.is_(True),
                    J.c.running_since.is_(None),
                    J.c.next_run_at.is_not(None),
                    J.c.next_run_at <= now,
                )
            )
            .values(running_since=now, last_run_at=now, claimed_by=owner)
            .returning(*J.c)
        )
        rows = await self.write(lambda c: c.execute(stmt).mappings().all())
        return [_record(r) for r in rows]

    async def claim_now(
        self, job_id: str, now: int, owner: str | None = None
    ) -> CronJobRecord | None:
        """Claim one job for a manual run whatever its schedule; None when it is running."""
        stmt = (
            update(J)
            .where(and_(J.c.id == job_id, J.c.running_since.is_(None)))
            .values(running_since=now, last_run_at=now, claimed_by=owner)
            .returning(*J.c)
        )
        row = await self.write(lambda c: c.execute(stmt).mappings().first())
        return _record(row) if row else None

    async def earliest_due(self) -> int | None:
        q = select(func.min(J.c.next_run_at)).where(
            and_(J.c.enabled.is_(True), J.c.running_since.is_(None))
        )
        value = await self.read(lambda c: c.execute(q).scalar())
        return int(value) if value is not None else None

    async def finish_firing(
        self,
        job_id: str,
        *,
        entry: dict[str, Any],
        status: str,
        error: str | None,
        next_run_at: int | None,
        remove: bool,
        created_at: int | None = None,
    ) -> None:
        """Record a firing's outcome (history capped at 20) and release the claim.

        `created_at`: the fired job's; a job removed while it ran and added again under its id
        is another job, which this firing leaves alone (it had rescheduled or, for a one-shot,
        deleted the new one)."""
        this = J.c.id == job_id
        if created_at is not None:
            this = and_(this, J.c.created_at == created_at)

        def op(c: Any) -> None:
            if remove:
                c.execute(delete(J).where(this))
                return
            row = c.execute(select(J.c.runs).where(this)).first()
            if row is None:
                return
            runs = [*(row[0] or []), entry][-HISTORY:]
            c.execute(
                update(J)
                .where(this)
                .values(
                    running_since=None,
                    last_status=status,
                    last_error=error,
                    runs=runs,
                    next_run_at=next_run_at,
                )
            )

        await self.write(op)

    async def release_cron_claims(self, live: Sequence[str] | None = None) -> int:
        """Claims left by a process that died: the jobs become due again (called at start),
        a manual run (`cron run`, due later by its schedule) too: due at its claim, so the
        firing the crash cut short happens again, as D29 says, instead of vanishing.

        `live`: the processes still alive (D29), whose claims stay; None: release every claim."""
        cond = J.c.running_since.is_not(None)
        if live is not None:
            cond = and_(cond, or_(J.c.claimed_by.is_(None), J.c.claimed_by.not_in(live)))
        again = case(
            (J.c.next_run_at > J.c.running_since, J.c.running_since), else_=J.c.next_run_at
        )
        stmt = update(J).where(cond).values(running_since=None, claimed_by=None, next_run_at=again)
        return int(await self.write(lambda c: c.execute(stmt).rowcount) or 0)
