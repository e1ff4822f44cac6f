"""People (D64, D65): usage counters for limits, linked identities and link codes.

Counters are added to in the database (an upsert that returns the new value), so limits hold
across gateway processes; a person is the set of platform accounts linked to one `personId`.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, and_, delete, select, tuple_

from core.store.database import Database, upsert_insert
from core.store.people_tables import IdentityLinkRow, LimitCounterRow, LinkCodeRow

C: Any = LimitCounterRow.__table__  # type: ignore[attr-defined]
L: Any = IdentityLinkRow.__table__  # type: ignore[attr-defined]
K: Any = LinkCodeRow.__table__  # type: ignore[attr-defined]

Bump = tuple[str, str, str, float]
"""(subject, window, kind, amount to add)."""


@dataclass(frozen=True, slots=True)
class IdentityLink:
    channel: str
    account_id: str
    user_id: str
    person_id: str
    linked_at: int

    def to_wire(self) -> dict[str, Any]:
        return {
            "channel": self.channel,
            "accountId": self.account_id,
            "userId": self.user_id,
            "linkedAt": self.linked_at,
        }


@dataclass(frozen=True, slots=True)
class LinkCode:
    code: str
    channel: str
    account_id: str
    user_id: str
    expires_at: int


def _add(c: Connection, subject: str, window: str, kind: str, amount: float) -> float:
    stmt = upsert_insert(c, C).values(subject=subject, window=window, kind=kind, value=amount)
    stmt = stmt.on_conflict_do_update(
        index_elements=["subject", "window", "kind"], set_={"value": C.c.value + amount}
    )
    c.execute(stmt)
    key = and_(C.c.subject == subject, C.c.window == window, C.c.kind == kind)
    return float(c.execute(select(C.c.value).where(key)).scalar_one())


class PeopleStore(Database):
    async def bump(self, items: Sequence[Bump]) -> list[float]:
        """Add to counters in one transaction; their new values, in order."""
        return await self.write(lambda c: [_add(c, *item) for item in items])

    async def counters(self, keys: Sequence[tuple[str, str, str]]) -> list[float]:
        """Current values (0 for a counter never added to), in order."""
        if not keys:
            return []

        def op(c: Connection) -> list[float]:
            q = select(C.c.subject, C.c.window, C.c.kind, C.c.value).where(
                tuple_(C.c.subject, C.c.window, C.c.kind).in_(list(keys))
            )
            found = {(s, w, k): float(v) for s, w, k, v in c.execute(q)}
            return [found.get(tuple(key), 0.0) for key in keys]  # type: ignore[arg-type]

        return await self.read(op)

    # ---- linked identities (D65) ------------------------------------------------------------

    async def person_of(self, channel: str, user_id: str) -> str | None:
        q = select(L.c.person_id).where(and_(L.c.channel == channel, L.c.user_id == user_id))
        return await self.read(lambda c: c.execute(q).scalar_one_or_none())

    async def identities(self) -> list[IdentityLink]:
        q = select(L.c.channel, L.c.account_id, L.c.user_id, L.c.person_id, L.c.linked_at)
        q = q.order_by(L.c.person_id, L.c.linked_at, L.c.channel, L.c.user_id)
        return await self.read(lambda c: [IdentityLink(*r) for r in c.execute(q)])

    async def link(
        self, first: tuple[str, str, str], second: tuple[str, str, str], now: int
    ) -> str:
        """Make two accounts (channel, accountId, userId) one person; their persons merge."""

        def op(c: Connection) -> str:
            persons = [
                c.execute(
                    select(L.c.person_id).where(and_(L.c.channel == ch, L.c.user_id == uid))
                ).scalar_one_or_none()
                for ch, _, uid in (first, second)
            ]
            person = persons[0] or persons[1] or uuid.uuid4().hex[:12]
            other = persons[1] if persons[0] else None
            if other and other != person:
                c.execute(L.update().where(L.c.person_id == other).values(person_id=person))
            for (ch, acc, uid), had in zip((first, second), persons, strict=True):
                if had is None:
                    c.execute(
                        L.insert().values(
                            channel=ch, account_id=acc, user_id=uid, person_id=person, linked_at=now
                        )
                    )
            return person

        return await self.write(op)

    async def unlink(self, channel: str, user_id: str) -> bool:
        """Take one account out of its person; a person left with one account dissolves."""

        def op(c: Connection) -> bool:
            key = and_(L.c.channel == channel, L.c.user_id == user_id)
            person = c.execute(select(L.c.person_id).where(key)).scalar_one_or_none()
            if person is None:
                return False
            c.execute(delete(L).where(key))
            rest = c.execute(select(L.c.channel).where(L.c.person_id == person)).all()
            if len(rest) == 1:
                c.execute(delete(L).where(L.c.person_id == person))
            return True

        return await self.write(op)

    async def add_link_code(self, code: LinkCode) -> None:
        def op(c: Connection) -> None:
            c.execute(
                delete(K).where(and_(K.c.channel == code.channel, K.c.user_id == code.user_id))
            )
            c.execute(
                K.insert().values(
                    code=code.code,
                    channel=code.channel,
                    account_id=code.account_id,
                    user_id=code.user_id,
                    expires_at=code.expires_at,
                )
            )

        await self.write(op)

    async def take_link_code(self, code: str, now: int) -> LinkCode | None:
        """The pending link with `code` (removed), or None when unknown or expired."""

        def op(c: Connection) -> LinkCode | None:
            row = c.execute(
                select(K.c.code, K.c.channel, K.c.account_id, K.c.user_id, K.c.expires_at).where(
                    K.c.code == code
                )
            ).first()
            c.execute(delete(K).where(K.c.expires_at <= now))
            if row is None or row[4] <= now:
                return None
            c.execute(delete(K).where(K.c.code == code))
            return LinkCode(*row)

        return await self.write(op)


__all__ = ["Bump", "IdentityLink", "LinkCode", "PeopleStore"]
