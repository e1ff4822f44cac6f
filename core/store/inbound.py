"""Inbound identities (decision D16): the first half of the exactly-once ledger.

An inbound message's identities are claimed in the transaction that stores the message (and its
queued run), so either both are durable or neither is; a second claim of the same identity
finds the row (or, racing another process, hits the primary key) and reports a duplicate,
before anything runs or replies.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, and_, delete, insert, select, update
from sqlalchemy.exc import IntegrityError

from core.model.errors import CrosstalkError
from core.model.records import RunRecord, SessionEntry, TranscriptMessage
from core.store.database import now_ms
from core.store.ledger_tables import DeliveryChunkRow, InboundIdentityRow
from core.store.runs import RunsStore
from core.store.tables import DeliveryRow, RunRow

I = InboundIdentityRow.__table__  # type: ignore[attr-defined]  # noqa: E741
C = DeliveryChunkRow.__table__  # type: ignore[attr-defined]
D = DeliveryRow.__table__  # type: ignore[attr-defined]
R = RunRow.__table__  # type: ignore[attr-defined]


@dataclass(frozen=True, slots=True)
class Claim:
    """One identity of an inbound message on one channel account."""

    channel: str
    account_id: str
    identity: str


@dataclass(slots=True)
class ClaimRecord:
    claim: Claim
    created_at: int
    session_key: str | None
    run_id: str | None
    result: dict[str, Any] | None


class DuplicateInbound(CrosstalkError):
    """A message with this platform identity was accepted before: drop it."""


def _exists(c: Connection, claims: Sequence[Claim]) -> bool:
    for cl in claims:
        q = (
            select(I.c.created_at)
            .where(
                and_(
                    I.c.channel == cl.channel,
                    I.c.account_id == cl.account_id,
                    I.c.identity == cl.identity,
                )
            )
            .limit(1)
        )
        if c.execute(q).first() is not None:
            return True
    return False


def _insert_claims(
    c: Connection, claims: Sequence[Claim], *, session_key: str | None, run_id: str | None
) -> None:
    now = now_ms()
    for cl in dict.fromkeys(claims):
        c.execute(
            insert(I).values(
                channel=cl.channel,
                account_id=cl.account_id,
                identity=cl.identity,
                created_at=now,
                session_key=session_key,
                run_id=run_id,
            )
        )


class InboundStore(RunsStore):
    async def _claiming_write(self, claims: Sequence[Claim], op: Any) -> Any:
        """Run `op` after claiming; a known identity (or a lost race on the key) raises."""

        def tx(c: Connection) -> Any:
            if _exists(c, claims):
                raise DuplicateInbound()
            return op(c)

        try:
            return await self.write(tx)
        except IntegrityError as exc:  # another process claimed it between our check and insert
            raise DuplicateInbound() from exc

    async def is_known(self, claims: Sequence[Claim]) -> bool:
        """Cheap early check (the claim inside the storing transaction is the authority)."""
        if not claims:
            return False
        return await self.read(lambda c: _exists(c, claims))

    async def claim_only(
        self,
        claims: Sequence[Claim],
        *,
        session_key: str | None = None,
        run_id: str | None = None,
    ) -> None:
        """Claim identities of something that stores no message (a chat command, an HTTP call)."""
        await self._claiming_write(
            claims, lambda c: _insert_claims(c, claims, session_key=session_key, run_id=run_id)
        )

    async def append_claimed(
        self, entry: SessionEntry, message: TranscriptMessage, claims: Sequence[Claim]
    ) -> int:
        """Store a user message that starts no run, with its identities, in one transaction."""

        def op(c: Connection) -> int:
            _insert_claims(c, claims, session_key=entry.key, run_id=None)
            (msg_id,) = self._insert_messages(c, entry, [message], True)
            return msg_id

        msg_id: int = await self._claiming_write(claims, op)
        await self._mirror_placed(entry, [message])
        return msg_id

    async def enqueue_claimed(
        self,
        entry: SessionEntry,
        message: TranscriptMessage,
        run: RunRecord,
        claims: Sequence[Claim],
    ) -> int:
        """Store a user message, its queued run and its identities atomically (one commit)."""

        def op(c: Connection) -> int:
            _insert_claims(c, claims, session_key=entry.key, run_id=run.id)
            # waiting: it takes its place in the transcript when its turn starts (D13)
            (msg_id,) = self._insert_messages(c, entry, [message], True, placed=False)
            run.input_message_id = msg_id
            self._insert_run(c, run)
            return msg_id

        msg_id: int = await self._claiming_write(claims, op)
        return msg_id

    async def get_claim(self, claim: Claim) -> ClaimRecord | None:
        def op(c: Connection) -> ClaimRecord | None:
            row = c.execute(
                select(I.c.created_at, I.c.session_key, I.c.run_id, I.c.result).where(
                    and_(
                        I.c.channel == claim.channel,
                        I.c.account_id == claim.account_id,
                        I.c.identity == claim.identity,
                    )
                )
            ).first()
            return ClaimRecord(claim, *row) if row else None

        return await self.read(op)

    async def latest_claim(
        self, channel: str, account_id: str, prefix: str, since_ms: int
    ) -> ClaimRecord | None:
        """The newest claim whose identity starts with `prefix`, made at `since_ms` or later:
        the first attempt of a request a client SDK retries (D80). A range on the key, so the
        primary key's index answers it."""

        def op(c: Connection) -> ClaimRecord | None:
            row = c.execute(
                select(I.c.identity, I.c.created_at, I.c.session_key, I.c.run_id, I.c.result)
                .where(
                    and_(
                        I.c.channel == channel,
                        I.c.account_id == account_id,
                        I.c.identity >= prefix,
                        I.c.identity < prefix + "\uffff",
                        I.c.created_at >= since_ms,
                    )
                )
                .order_by(I.c.created_at.desc())
                .limit(1)
            ).first()
            if row is None:
                return None
            return ClaimRecord(Claim(channel, account_id, row[0]), *row[1:])

        return await self.read(op)

    async def set_claim_result(self, claim: Claim, result: dict[str, Any]) -> None:
        """Keep the first response of an idempotent HTTP request, to answer its repeats."""
        await self.write(
            lambda c: c.execute(
                update(I)
                .where(
                    and_(
                        I.c.channel == claim.channel,
                        I.c.account_id == claim.account_id,
                        I.c.identity == claim.identity,
                    )
                )
                .values(result=result)
            )
        )

    async def prune_claims(self, older_than_ms: int) -> int:
        """Forget identities older than the window (a redelivery that late is not expected)."""

        def op(c: Connection) -> int:
            return int(c.execute(delete(I).where(I.c.created_at < older_than_ms)).rowcount or 0)

        return await self.write(op)
