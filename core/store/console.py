"""The owner console's operations (D79, D180–D184): one aggregate of the store.

Its own table holds the console's sign-ins; the rest reads what the other aggregates write:
usage added up per day, session and model, the overview's counts, and the live feed's
watermarks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, case, delete, func, insert, select

from core.store.console_tables import ConsoleSessionRow
from core.store.cron_tables import CronJobRow
from core.store.database import Database
from core.store.pairing_tables import PairingApprovalRow, PairingRequestRow
from core.store.tables import DeliveryRow, RunRow, SessionRow

C = ConsoleSessionRow.__table__  # type: ignore[attr-defined]
S = SessionRow.__table__  # type: ignore[attr-defined]
R = RunRow.__table__  # type: ignore[attr-defined]
D = DeliveryRow.__table__  # type: ignore[attr-defined]
Q = PairingRequestRow.__table__  # type: ignore[attr-defined]
A = PairingApprovalRow.__table__  # type: ignore[attr-defined]
J = CronJobRow.__table__  # type: ignore[attr-defined]


DAY_MS = 86_400_000

INTERNAL_KINDS = ("cron", "hook", "node")


@dataclass(slots=True, frozen=True)
class UsageGroup:
    """The turns (runs) of one group: how many, how many priced, their cost and tokens."""

    key: str
    turns: int
    priced_turns: int
    cost_usd: float
    input_tokens: int
    output_tokens: int


@dataclass(slots=True, frozen=True)
class UsageCell:
    """The turns of one session on one UTC day with one model (`None`: not recorded)."""

    day: int
    """UTC days since the epoch."""
    session_key: str
    model: str | None
    agent_id: str | None
    """None when the session no longer exists (its key still names the agent)."""
    channel: str
    figures: UsageGroup


class ConsoleStore(Database):
    """Sign-ins, usage and the live feed's watermarks."""

    async def add_console_session(self, digest: str, now: int, expires_at: int) -> None:
        """Store a new sign-in; expired ones are removed in the same transaction."""

        def op(c: Any) -> None:
            c.execute(delete(C).where(C.c.expires_at <= now))
            c.execute(insert(C).values(digest=digest, created_at=now, expires_at=expires_at))

        await self.write(op)

    async def console_session_expiry(self, digest: str, now: int) -> int | None:
        """The sign-in's expiry time (ms) while it is valid, else None."""
        q = select(C.c.expires_at).where(and_(C.c.digest == digest, C.c.expires_at > now))
        value = await self.read(lambda c: c.execute(q).scalar())
        return int(value) if value is not None else None

    async def end_console_session(self, digest: str) -> bool:
        """Sign-out: the row goes, on every process at once (they all read the same table)."""
        res = await self.write(lambda c: c.execute(delete(C).where(C.c.digest == digest)))
        return bool(res.rowcount)

    async def usage_cells(self, since: int, until: int) -> list[UsageCell]:
        """Turns created in [since, until), added up in SQL per day, session and model (one pass
        over an indexed range of `runs`, each turn's JSON read once), then joined to their sessions
        (once per cell, not per turn); the rest is a fold over cells (`engine.observability.usage`).
        """
        cost = R.c.meta["costUsd"].as_float()
        day = (R.c.created_at // DAY_MS).label("day")
        model = R.c.meta["model"].as_string().label("model")
        cells = (
            select(
                day,
                R.c.session_key,
                model,
                func.count().label("turns"),
                func.count(cost).label("priced"),
                func.coalesce(func.sum(cost), 0.0).label("cost"),
                func.coalesce(func.sum(R.c.input_tokens), 0).label("tin"),
                func.coalesce(func.sum(R.c.output_tokens), 0).label("tout"),
            )
            .where(and_(R.c.created_at >= since, R.c.created_at < until))
            .group_by(day, R.c.session_key, model)
            .subquery()
        )
        channel = case(
            (S.c.kind.in_(INTERNAL_KINDS), "internal"),
            else_=func.coalesce(S.c.channel, S.c.last_channel, "unknown"),
        )
        q = select(cells, S.c.agent_id, channel).select_from(
            cells.outerjoin(S, S.c.key == cells.c.session_key)
        )

        def op(c: Any) -> list[UsageCell]:
            return [
                UsageCell(
                    int(r[0]),
                    str(r[1]),
                    r[2],
                    r[8],
                    str(r[9]),
                    UsageGroup(
                        "", int(r[3]), int(r[4]), float(r[5] or 0.0), int(r[6] or 0), int(r[7] or 0)
                    ),
                )
                for r in c.execute(q)
            ]

        return await self.read(op)

    async def run_counts(self) -> dict[str, int]:
        """Turns waiting for their session (`queued`) and running, across every process."""
        q = (
            select(R.c.status, func.count())
            .where(R.c.status.in_(("queued", "running")))
            .group_by(R.c.status)
        )
        rows = await self.read(lambda c: c.execute(q).all())
        counts = {"queued": 0, "running": 0}
        counts.update({str(status): int(n) for status, n in rows})
        return counts

    async def failed_since(self, since: int) -> int:
        """Failed deliveries created at or after `since` (the outcome index narrows the scan)."""
        q = (
            select(func.count())
            .select_from(D)
            .where(and_(D.c.outcome == "failed", D.c.created_at >= since))
        )
        count = await self.read(lambda c: c.execute(q).scalar())
        return int(count or 0)

    async def watermarks(self) -> dict[str, Any]:
        """Cheap indexed maxima that move whenever the console's lists change: the newest session
        update, delivery, pairing request or approval, and cron run (one read)."""

        def op(c: Any) -> dict[str, Any]:
            pairing = c.execute(
                select(func.count(), func.max(Q.c.created_at)).where(Q.c.status == "pending")
            ).one()
            approved = c.execute(select(func.count(), func.max(A.c.approved_at))).one()
            cron = c.execute(
                select(
                    func.max(J.c.updated_at),
                    func.max(J.c.last_run_at),
                    func.count(J.c.running_since),
                )
            ).one()
            return {
                "sessions": c.execute(select(func.max(S.c.updated_at))).scalar(),
                "deliveries": [
                    c.execute(select(func.max(D.c.id))).scalar(),
                    c.execute(
                        select(func.count()).select_from(D).where(D.c.outcome == "pending")
                    ).scalar(),
                ],
                "pairing": [*pairing, *approved],
                "cron": list(cron),
            }

        return await self.read(op)
