"""DM pairing (tables `pairing_requests`, `pairing_approvals`): one aggregate of the store.

Approval is one transaction: the request changes state and the sender joins the approved list
together, so a restart never sees half of it.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection, and_, delete, insert, select, text, update

from core.store.database import Database
from core.store.pairing_tables import PairingApprovalRow, PairingRequestRow

Q = PairingRequestRow.__table__  # type: ignore[attr-defined]
A = PairingApprovalRow.__table__  # type: ignore[attr-defined]


@dataclass(slots=True)
class PairingRequest:
    code: str
    channel: str
    account_id: str
    user_id: str
    user_name: str | None
    chat_id: str
    thread_id: str | None
    deliver_to: str
    preview: str
    status: str
    created_at: int
    expires_at: int

    def to_wire(self) -> dict[str, object]:
        return {
            "channel": self.channel,
            "accountId": self.account_id,
            "code": self.code,
            "userId": self.user_id,
            "userName": self.user_name,
            "chatId": self.chat_id,
            "createdAt": self.created_at,
            "expiresAt": self.expires_at,
            "preview": self.preview,
        }


@dataclass(slots=True)
class Approval:
    channel: str
    account_id: str
    user_id: str
    approved_at: int

    def to_wire(self) -> dict[str, object]:
        return {
            "channel": self.channel,
            "accountId": self.account_id,
            "userId": self.user_id,
            "approvedAt": self.approved_at,
        }


_REQ_COLS = (
    Q.c.code,
    Q.c.channel,
    Q.c.account_id,
    Q.c.user_id,
    Q.c.user_name,
    Q.c.chat_id,
    Q.c.thread_id,
    Q.c.deliver_to,
    Q.c.preview,
    Q.c.status,
    Q.c.created_at,
    Q.c.expires_at,
)


def _requests(c: Connection, *conds: object) -> list[PairingRequest]:
    q = select(*_REQ_COLS).where(and_(*conds)).order_by(Q.c.created_at)  # type: ignore[arg-type]
    return [PairingRequest(*row) for row in c.execute(q)]  # type: ignore[call-arg]


def _insert_request(c: Connection, req: PairingRequest) -> None:
    c.execute(
        insert(Q).values(
            code=req.code,
            channel=req.channel,
            account_id=req.account_id,
            user_id=req.user_id,
            user_name=req.user_name,
            chat_id=req.chat_id,
            thread_id=req.thread_id,
            deliver_to=req.deliver_to,
            preview=req.preview,
            status=req.status,
            created_at=req.created_at,
            expires_at=req.expires_at,
        )
    )


def _open_requests(
    c: Connection, channel: str, account_id: str, user_id: str, now: int
) -> list[PairingRequest]:
    """The sender's unexpired pending or denied requests, oldest first."""
    return _requests(
        c,
        Q.c.channel == channel,
        Q.c.account_id == account_id,
        Q.c.user_id == user_id,
        Q.c.status.in_(("pending", "denied")),
        Q.c.expires_at > now,
    )


class PairingStore(Database):
    async def is_approved(self, channel: str, account_id: str, user_id: str) -> bool:
        q = (
            select(A.c.id)
            .where(
                and_(A.c.channel == channel, A.c.account_id == account_id, A.c.user_id == user_id)
            )
            .limit(1)
        )
        return await self.read(lambda c: c.execute(q).first() is not None)

    async def open_request(
        self, channel: str, account_id: str, user_id: str, now: int
    ) -> PairingRequest | None:
        """The sender's unexpired pending or denied request (it holds back a new code)."""
        found = await self.read(lambda c: _open_requests(c, channel, account_id, user_id, now))
        return found[-1] if found else None

    async def pending_requests(
        self, now: int, *, channel: str | None = None, account_id: str | None = None
    ) -> list[PairingRequest]:
        conds = [Q.c.status == "pending", Q.c.expires_at > now]
        if channel is not None:
            conds.append(Q.c.channel == channel)
        if account_id is not None:
            conds.append(Q.c.account_id == account_id)
        return await self.read(lambda c: _requests(c, *conds))

    async def code_exists(self, code: str) -> bool:
        q = select(Q.c.code).where(Q.c.code == code).limit(1)
        return await self.read(lambda c: c.execute(q).first() is not None)

    async def add_request_once(self, req: PairingRequest, max_pending: int) -> str | None:
        """Check and insert in one transaction, serialised per channel account across gateway
        processes (an advisory lock on PostgreSQL, D29): one open request per sender, at most
        `max_pending` per account, the oldest pending ones dropped to make room (D81: a flood
        never keeps the next newcomer from a code), expired ones removed (storage stays
        bounded). Returns the refusal reason, or None when `req` was added."""

        def op(c: Connection) -> str | None:
            if c.dialect.name == "postgresql":
                c.execute(
                    text("SELECT pg_advisory_xact_lock(hashtext(:k))"),
                    {"k": f"pairing:{req.channel}:{req.account_id}"},
                )
            mine = _open_requests(c, req.channel, req.account_id, req.user_id, req.created_at)
            if mine:
                return (
                    "pairing request pending"
                    if mine[-1].status == "pending"
                    else "pairing request denied"
                )
            account = and_(Q.c.channel == req.channel, Q.c.account_id == req.account_id)
            c.execute(
                delete(Q).where(
                    and_(
                        account,
                        Q.c.status.in_(("pending", "denied")),
                        Q.c.expires_at <= req.created_at,
                    )
                )
            )
            pending = _requests(c, account, Q.c.status == "pending")
            drop = [r.code for r in pending[: max(0, len(pending) - max_pending + 1)]]
            if drop:
                c.execute(delete(Q).where(Q.c.code.in_(drop)))
            _insert_request(c, req)
            return None

        return await self.write(op)

    async def add_request(self, req: PairingRequest) -> None:
        await self.write(lambda c: _insert_request(c, req))

    async def settle_request(
        self, code: str, now: int, status: str, channel: str | None = None
    ) -> PairingRequest | None:
        """Move an unexpired pending request to `approved` (adding the sender) or `denied`."""

        def op(c: Connection) -> PairingRequest | None:
            conds = [Q.c.code == code, Q.c.status == "pending", Q.c.expires_at > now]
            if channel is not None:
                conds.append(Q.c.channel == channel)
            found = _requests(c, *conds)
            if not found:
                return None
            req = found[0]
            # the conditions again in the UPDATE: a concurrent settle of the same code waits
            # for this row and then finds it no longer pending (PostgreSQL re-reads it), so
            # Approve pressed twice, or racing Deny, settles it once
            if c.execute(update(Q).where(and_(*conds)).values(status=status)).rowcount != 1:
                return None
            req.status = status
            if status == "approved":
                exists = c.execute(
                    select(A.c.id).where(
                        and_(
                            A.c.channel == req.channel,
                            A.c.account_id == req.account_id,
                            A.c.user_id == req.user_id,
                        )
                    )
                ).first()
                if exists is None:
                    c.execute(
                        insert(A).values(
                            channel=req.channel,
                            account_id=req.account_id,
                            user_id=req.user_id,
                            approved_at=now,
                        )
                    )
            return req

        return await self.write(op)

    async def approvals(self, *, channel: str | None = None) -> list[Approval]:
        q = select(A.c.channel, A.c.account_id, A.c.user_id, A.c.approved_at)
        if channel is not None:
            q = q.where(A.c.channel == channel)
        q = q.order_by(A.c.approved_at, A.c.id)
        return await self.read(lambda c: [Approval(*row) for row in c.execute(q)])

    async def revoke_approval(self, channel: str, user_id: str) -> int:
        """Remove the sender from every account of `channel`; returns how many rows went."""

        def op(c: Connection) -> int:
            res = c.execute(delete(A).where(and_(A.c.channel == channel, A.c.user_id == user_id)))
            return int(res.rowcount or 0)

        return await self.write(op)
