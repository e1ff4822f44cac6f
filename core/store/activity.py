"""What a session is doing, from the database so it holds across processes (D67): its runs in
flight and the sub-agents it started."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection, and_, func, select

from core.store.sessions import SessionsStore
from core.store.tables import RunRow, SubagentRunRow

R = RunRow.__table__  # type: ignore[attr-defined]
A = SubagentRunRow.__table__  # type: ignore[attr-defined]


@dataclass(frozen=True, slots=True)
class SessionActivity:
    running: int
    queued: int
    subagents_running: int
    subagents_total: int


class ActivityStore(SessionsStore):
    async def session_activity(self, session_key: str) -> SessionActivity:
        def op(c: Connection) -> SessionActivity:
            runs: dict[str, int] = dict(
                c.execute(
                    select(R.c.status, func.count())
                    .where(
                        and_(R.c.session_key == session_key, R.c.status.in_(("queued", "running")))
                    )
                    .group_by(R.c.status)
                ).all()
            )
            total, running = c.execute(
                select(func.count(), func.count().filter(A.c.outcome.is_(None))).where(
                    A.c.requester_key == session_key
                )
            ).one()
            return SessionActivity(
                int(runs.get("running", 0)), int(runs.get("queued", 0)), int(running), int(total)
            )

        return await self.read(op)
