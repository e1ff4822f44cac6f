"""The exactly-once ledger (decision D16): inbound identities and the per-chunk delivery log.

Functions of a :class:`Store`, each one transaction. An inbound message's identities are
claimed in the transaction that stores the message (and its queued run), so either both are
durable or neither is; a second claim of the same identity finds the row (or, racing another
process, hits the primary key) and reports a duplicate, before anything runs or replies.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, and_, delete, func, insert, or_, select, update
from sqlalchemy.exc import IntegrityError

from core.model.errors import CrosstalkError
from core.model.records import DeliveryRecord, RunRecord, SessionEntry, TranscriptMessage
from core.store.ledger_tables import DeliveryChunkRow, InboundIdentityRow
from core.store.store import Store, now_ms
from core.store.tables import DeliveryRow, RunRow

I = InboundIdentityRow.__table__  # type: ignore[attr-defined]  # noqa: E741
C = DeliveryChunkRow.__table__  # type: ignore[attr-defined]
D = DeliveryRow.__table__  # type: ignore[attr-defined]
R = RunRow.__table__  # type: ignore[attr-defined]

ChunkState = str  # "pending" | "sent" | "failed" | "resent_after_crash"


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


@dataclass(slots=True)
class ChunkRecord:
    delivery_id: int
    chunk_index: int
    text: str
    state: ChunkState
    platform_message_id: str | None = None
    reason: str | None = None

    def to_wire(self) -> dict[str, Any]:
        return {
            "index": self.chunk_index,
            "state": self.state,
            "platformMessageId": self.platform_message_id,
            "reason": self.reason,
        }


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


async def _claiming_write(store: Store, claims: Sequence[Claim], op: Any) -> Any:
    """Run `op` after claiming; a known identity (or a lost race on the key) raises."""

    def tx(c: Connection) -> Any:
        if _exists(c, claims):
            raise DuplicateInbound()
        return op(c)

    try:
        return await store.write(tx)
    except IntegrityError as exc:  # another process claimed it between our check and insert
        raise DuplicateInbound() from exc


async def is_known(store: Store, claims: Sequence[Claim]) -> bool:
    """Cheap early check (the claim inside the storing transaction is the authority)."""
    if not claims:
        return False
    return await store.read(lambda c: _exists(c, claims))


async def claim_only(
    store: Store,
    claims: Sequence[Claim],
    *,
    session_key: str | None = None,
    run_id: str | None = None,
) -> None:
    """Claim identities of something that stores no message (a chat command, an HTTP call)."""
    await _claiming_write(
        store, claims, lambda c: _insert_claims(c, claims, session_key=session_key, run_id=run_id)
    )


async def append_claimed(
    store: Store, entry: SessionEntry, message: TranscriptMessage, claims: Sequence[Claim]
) -> int:
    """Store a user message that starts no run, with its identities, in one transaction."""

    def op(c: Connection) -> int:
        _insert_claims(c, claims, session_key=entry.key, run_id=None)
        (msg_id,) = Store._insert_messages(c, entry, [message], True)
        return msg_id

    msg_id: int = await _claiming_write(store, claims, op)
    await store._mirror_placed(entry, [message])
    return msg_id


async def enqueue_claimed(
    store: Store,
    entry: SessionEntry,
    message: TranscriptMessage,
    run: RunRecord,
    claims: Sequence[Claim],
) -> int:
    """Store a user message, its queued run and its identities atomically (one commit)."""

    def op(c: Connection) -> int:
        _insert_claims(c, claims, session_key=entry.key, run_id=run.id)
        # waiting: it takes its place in the transcript when its turn starts (D13)
        (msg_id,) = Store._insert_messages(c, entry, [message], True, placed=False)
        run.input_message_id = msg_id
        Store._insert_run(c, run)
        return msg_id

    msg_id: int = await _claiming_write(store, claims, op)
    return msg_id


async def get_claim(store: Store, claim: Claim) -> ClaimRecord | None:
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

    return await store.read(op)


async def set_claim_result(store: Store, claim: Claim, result: dict[str, Any]) -> None:
    """Keep the first response of an idempotent HTTP request, to answer its repeats."""
    await store.write(
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


async def prune_claims(store: Store, older_than_ms: int) -> int:
    """Forget identities older than the window (a redelivery that late is not expected)."""

    def op(c: Connection) -> int:
        return int(c.execute(delete(I).where(I.c.created_at < older_than_ms)).rowcount or 0)

    return await store.write(op)


# ---- the per-chunk delivery log ---------------------------------------------------------------


async def open_delivery(store: Store, rec: DeliveryRecord, chunks: Sequence[str]) -> int:
    """The delivery row (outcome `pending`) and one `pending` row per chunk, before any send."""

    def op(c: Connection) -> int:
        res = c.execute(
            insert(D).values(
                session_key=rec.session_key,
                kind=rec.kind,
                outcome="pending",
                reason=None,
                channel=rec.channel,
                to=rec.to,
                account_id=rec.account_id,
                thread_id=rec.thread_id,
                text=rec.text,
                run_id=rec.run_id,
                attempts=0,
                created_at=rec.created_at,
            )
        )
        delivery_id = int(res.inserted_primary_key[0])  # type: ignore[index]
        now = now_ms()
        for i, text in enumerate(chunks):
            c.execute(
                insert(C).values(
                    delivery_id=delivery_id,
                    chunk_index=i,
                    text=text,
                    state="pending",
                    updated_at=now,
                )
            )
        return delivery_id

    rec.id = await store.write(op)
    return rec.id


async def mark_chunk(
    store: Store,
    delivery_id: int,
    index: int,
    state: ChunkState,
    *,
    message_id: str | None = None,
    reason: str | None = None,
) -> None:
    await store.write(
        lambda c: c.execute(
            update(C)
            .where(and_(C.c.delivery_id == delivery_id, C.c.chunk_index == index))
            .values(state=state, platform_message_id=message_id, reason=reason, updated_at=now_ms())
        )
    )


async def finish_delivery(
    store: Store, delivery_id: int, outcome: str, reason: str | None, attempts: int
) -> None:
    """Final outcome; chunks still `pending` after a failure end `failed` with its reason."""

    def op(c: Connection) -> None:
        c.execute(
            update(D)
            .where(D.c.id == delivery_id)
            .values(outcome=outcome, reason=reason, attempts=attempts)
        )
        if outcome == "failed":
            c.execute(
                update(C)
                .where(and_(C.c.delivery_id == delivery_id, C.c.state == "pending"))
                .values(state="failed", reason=reason, updated_at=now_ms())
            )

    await store.write(op)


async def fail_sent_chunk(
    store: Store, channel: str, account_id: str, message_id: str, reason: str
) -> int | None:
    """The platform gave up on a chunk it had accepted (D166): that chunk and its delivery end
    `failed` with `reason`. Returns the delivery id; None when no chunk of this channel account
    has that platform message id."""
    account = D.c.account_id == account_id
    if account_id == "default":  # a delivery without an account went to the default one
        account = or_(account, D.c.account_id.is_(None))

    def op(c: Connection) -> int | None:
        row = c.execute(
            select(C.c.delivery_id, C.c.chunk_index)
            .select_from(C.join(D, D.c.id == C.c.delivery_id))
            .where(C.c.platform_message_id == message_id, D.c.channel == channel, account)
            .order_by(C.c.delivery_id.desc())
            .limit(1)
        ).first()
        if row is None:
            return None
        delivery_id, index = int(row[0]), int(row[1])
        c.execute(
            update(C)
            .where(and_(C.c.delivery_id == delivery_id, C.c.chunk_index == index))
            .values(state="failed", reason=reason, updated_at=now_ms())
        )
        c.execute(update(D).where(D.c.id == delivery_id).values(outcome="failed", reason=reason))
        return delivery_id

    result: int | None = await store.write(op)
    return result


async def chunks_of(store: Store, delivery_ids: Sequence[int]) -> dict[int, list[ChunkRecord]]:
    if not delivery_ids:
        return {}
    q = (
        select(
            C.c.delivery_id,
            C.c.chunk_index,
            C.c.text,
            C.c.state,
            C.c.platform_message_id,
            C.c.reason,
        )
        .where(C.c.delivery_id.in_(list(delivery_ids)))
        .order_by(C.c.delivery_id, C.c.chunk_index)
    )
    out: dict[int, list[ChunkRecord]] = {}
    for row in await store.read(lambda c: c.execute(q).all()):
        out.setdefault(int(row[0]), []).append(ChunkRecord(*row))
    return out


async def pending_deliveries(store: Store, before_ms: int) -> list[DeliveryRecord]:
    """Deliveries a dead process left `pending` (opened before `before_ms`, when this one
    started): their first pending chunk is in doubt."""
    q = select(D).where(and_(D.c.outcome == "pending", D.c.created_at < before_ms)).order_by(D.c.id)
    return await store.read(lambda c: [DeliveryRecord(**r) for r in c.execute(q).mappings().all()])


async def last_activity(store: Store, delivery_ids: Sequence[int]) -> dict[int, int]:
    """When each delivery last changed (its newest chunk update)."""
    if not delivery_ids:
        return {}
    q = (
        select(C.c.delivery_id, func.max(C.c.updated_at))
        .where(C.c.delivery_id.in_(list(delivery_ids)))
        .group_by(C.c.delivery_id)
    )
    return {int(d): int(t) for d, t in await store.read(lambda c: c.execute(q).all())}


async def failed_counts(store: Store) -> dict[tuple[str, str], int]:
    """Failed deliveries per (channel, account), for `/healthz` and `channels status`."""
    q = (
        select(D.c.channel, D.c.account_id, func.count())
        .where(D.c.outcome == "failed")
        .group_by(D.c.channel, D.c.account_id)
    )
    rows = await store.read(lambda c: c.execute(q).all())
    out: dict[tuple[str, str], int] = {}
    for channel, account, n in rows:
        key = (str(channel), str(account or "default"))
        out[key] = out.get(key, 0) + int(n)
    return out


async def undelivered_replies(
    store: Store, *, since_ms: int, before_ms: int, ended_before_ms: int | None = None
) -> list[RunRecord]:
    """Finished chat runs with no delivery row: the process died between the end of the turn
    and the opening of its delivery, so the reply is in the transcript but not in the chat."""
    has_delivery = select(D.c.id).where(D.c.run_id == R.c.id).exists()
    q = (
        select(R)
        .where(
            and_(
                R.c.deliver.is_(True),
                R.c.status == "ok",
                R.c.created_at >= since_ms,
                R.c.created_at < before_ms,
                R.c.ended_at < (ended_before_ms or before_ms),
                ~has_delivery,
            )
        )
        .order_by(R.c.created_at)
    )
    return await store.read(lambda c: [RunRecord(**r) for r in c.execute(q).mappings().all()])
