"""The delivery log (decision D16): one row per outbound attempt, one per chunk.

Every outbound attempt of the gate is a row here with its outcome and reason; a delivery's
chunks are written `pending` before the first send and each is marked as it is sent, so a
restart knows which chunk reached the chat and which one is in doubt (docs/DELIVERY.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    BigInteger,
    Connection,
    Integer,
    and_,
    bindparam,
    func,
    insert,
    or_,
    select,
    update,
)

from core.model.media import media_kind
from core.model.records import DeliveryOrigin, DeliveryRecord, KeptDelivery, RunRecord, SentMedia
from core.store.database import Database, now_ms
from core.store.ledger_tables import DeliveryChunkRow
from core.store.media_tables import MediaRow
from core.store.tables import DeliveryRow, RunRow

C = DeliveryChunkRow.__table__  # type: ignore[attr-defined]
D = DeliveryRow.__table__  # type: ignore[attr-defined]
R = RunRow.__table__  # type: ignore[attr-defined]
M = MediaRow.__table__  # type: ignore[attr-defined]

ChunkState = str  # "pending" | "sent" | "failed" | "resent_after_crash"


@dataclass(slots=True)
class ChunkRecord:
    delivery_id: int
    chunk_index: int
    text: str
    state: ChunkState
    platform_message_id: str | None = None
    reason: str | None = None
    media_id: str | None = None
    """A media chunk (D78): the stored item it sends."""

    def to_wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "index": self.chunk_index,
            "state": self.state,
            "platformMessageId": self.platform_message_id,
            "reason": self.reason,
        }
        if self.media_id:
            out["mediaId"] = self.media_id
        return out


def _insert_delivery(
    c: Connection, rec: DeliveryRecord, *, outcome: str, reason: str | None, attempts: int
) -> int:
    """The delivery row for `rec` with the given state; its id."""
    res = c.execute(
        insert(D).values(
            session_key=rec.session_key,
            kind=rec.kind,
            outcome=outcome,
            reason=reason,
            channel=rec.channel,
            to=rec.to,
            account_id=rec.account_id,
            thread_id=rec.thread_id,
            text=rec.text,
            run_id=rec.run_id,
            attempts=attempts,
            created_at=rec.created_at,
        )
    )
    return int(res.inserted_primary_key[0])  # type: ignore[index]


class DeliveriesStore(Database):
    async def open_delivery(
        self,
        rec: DeliveryRecord,
        chunks: Sequence[str],
        media_ids: Sequence[str | None] = (),
    ) -> int:
        """The delivery row (outcome `pending`) and one `pending` row per chunk, before any send;
        `media_ids[i]` names the stored item chunk `i` sends (D78), when it is a media chunk."""

        def op(c: Connection) -> int:
            delivery_id = _insert_delivery(c, rec, outcome="pending", reason=None, attempts=0)
            now = now_ms()
            for i, text in enumerate(chunks):
                c.execute(
                    insert(C).values(
                        delivery_id=delivery_id,
                        chunk_index=i,
                        text=text,
                        state="pending",
                        updated_at=now,
                        media_id=media_ids[i] if i < len(media_ids) else None,
                    )
                )
            return delivery_id

        rec.id = await self.write(op)
        return rec.id

    async def mark_chunk(
        self,
        delivery_id: int,
        index: int,
        state: ChunkState,
        *,
        message_id: str | None = None,
        reason: str | None = None,
    ) -> None:
        await self.write(
            lambda c: c.execute(
                update(C)
                .where(and_(C.c.delivery_id == delivery_id, C.c.chunk_index == index))
                .values(
                    state=state, platform_message_id=message_id, reason=reason, updated_at=now_ms()
                )
            )
        )

    async def finish_delivery(
        self, delivery_id: int, outcome: str, reason: str | None, attempts: int
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

        await self.write(op)

    async def fail_sent_chunk(
        self, channel: str, account_id: str, message_id: str, reason: str
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
            c.execute(
                update(D).where(D.c.id == delivery_id).values(outcome="failed", reason=reason)
            )
            return delivery_id

        result: int | None = await self.write(op)
        return result

    async def chunks_of(self, delivery_ids: Sequence[int]) -> dict[int, list[ChunkRecord]]:
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
                C.c.media_id,
            )
            .where(C.c.delivery_id.in_(list(delivery_ids)))
            .order_by(C.c.delivery_id, C.c.chunk_index)
        )
        out: dict[int, list[ChunkRecord]] = {}
        for row in await self.read(lambda c: c.execute(q).all()):
            out.setdefault(int(row[0]), []).append(ChunkRecord(*row))
        return out

    async def pending_deliveries(self, before_ms: int) -> list[DeliveryRecord]:
        """Deliveries a dead process left `pending` (opened before `before_ms`, when this one
        started): their first pending chunk is in doubt."""
        q = (
            select(D)
            .where(and_(D.c.outcome == "pending", D.c.created_at < before_ms))
            .order_by(D.c.id)
        )
        return await self.read(
            lambda c: [DeliveryRecord(**r) for r in c.execute(q).mappings().all()]
        )

    async def last_activity(self, delivery_ids: Sequence[int]) -> dict[int, int]:
        """When each delivery last changed (its newest chunk update)."""
        if not delivery_ids:
            return {}
        q = (
            select(C.c.delivery_id, func.max(C.c.updated_at))
            .where(C.c.delivery_id.in_(list(delivery_ids)))
            .group_by(C.c.delivery_id)
        )
        return {int(d): int(t) for d, t in await self.read(lambda c: c.execute(q).all())}

    async def failed_counts(self) -> dict[tuple[str, str], int]:
        """Failed deliveries per (channel, account), for `/healthz` and `channels status`."""
        q = (
            select(D.c.channel, D.c.account_id, func.count())
            .where(D.c.outcome == "failed")
            .group_by(D.c.channel, D.c.account_id)
        )
        rows = await self.read(lambda c: c.execute(q).all())
        out: dict[tuple[str, str], int] = {}
        for channel, account, n in rows:
            key = (str(channel), str(account or "default"))
            out[key] = out.get(key, 0) + int(n)
        return out

    async def undelivered_replies(
        self, *, since_ms: int, before_ms: int, ended_before_ms: int | None = None
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
        return await self.read(lambda c: [RunRecord(**r) for r in c.execute(q).mappings().all()])

    async def record_delivery(self, rec: DeliveryRecord) -> int:
        rec.id = await self.write(
            lambda c: _insert_delivery(
                c, rec, outcome=rec.outcome, reason=rec.reason, attempts=rec.attempts
            )
        )
        return rec.id

    async def list_deliveries(
        self,
        *,
        session_key: str | None = None,
        outcome: str | None = None,
        limit: int = 100,
        channel: str | None = None,
        since: int | None = None,
    ) -> list[DeliveryRecord]:
        q = select(D)
        if session_key is not None:
            q = q.where(D.c.session_key == session_key)
        if outcome is not None:
            q = q.where(D.c.outcome == outcome)
        if channel is not None:
            q = q.where(D.c.channel == channel)
        if since is not None:
            q = q.where(D.c.created_at >= since)
        q = q.order_by(D.c.id.desc()).limit(limit)
        return await self.read(
            lambda c: [DeliveryRecord(**r) for r in c.execute(q).mappings().all()]
        )

    async def delivery_origin(self, delivery_id: int) -> DeliveryOrigin | None:
        """What sent delivery `delivery_id`: kind, session and job or hook (D136)."""
        row = await self.read(lambda c: c.execute(_ORIGIN, {"id": delivery_id}).first())
        return _origin(row[0], row[1], row[2], row[3]) if row is not None else None

    async def kept_for(
        self, channel: str, to: str, kinds: Sequence[str], limit: int = 50, since: int = 0
    ) -> list[KeptDelivery]:
        """The newest `limit` deliveries of `kinds` that reached (or were kept for, or are
        being sent to) one chat at `since` (ms) or later, oldest first, each with its origin and
        the items it sends: what the web chat shows besides its transcript (cron and webhook
        replies live in their own sessions, D136; `since` is the session's reset, so `/new`
        leaves the earlier ones behind, D137; a delivery counts from its opening, D190; its
        media are read for all of them at once, D192)."""

        def op(c: Connection) -> list[KeptDelivery]:
            found = [  # one index range per kind, read backwards: no sort (D136)
                r
                for kind in kinds
                for r in c.execute(
                    _KEPT,
                    {"channel": channel, "to": to, "kind": kind, "limit": limit, "since": since},
                ).mappings()
            ]
            found = sorted(found, key=lambda r: int(r["id"]), reverse=True)[:limit]
            media: dict[int, list[SentMedia]] = {}
            if found:  # one read for them all, by the chunks' primary key (D192)
                ids = [int(r["id"]) for r in found]
                for d, *item in c.execute(_KEPT_MEDIA, {"ids": ids}).all():
                    media.setdefault(int(d), []).append(_sent(*item))
            out = []
            for r in reversed(found):
                rec = DeliveryRecord(**{k: v for k, v in r.items() if k != "run_meta"})
                origin = _origin(rec.kind, rec.session_key, r["run_meta"])
                out.append(KeptDelivery(rec, origin, tuple(media.get(int(r["id"]), ()))))
            return out

        return await self.read(op)


_ORIGIN = (
    select(D.c.kind, D.c.session_key, R.c.meta, D.c.run_id)
    .select_from(D.outerjoin(R, R.c.id == D.c.run_id))
    .where(D.c.id == bindparam("id"))
)
"""A delivery's origin; built once (D42), read for each web-chat chunk (D136)."""

KEPT_OUTCOMES = ("pending", "delivered", "resent_after_crash")
"""A kept delivery counts from its opening, before its first send (D190): a page's history read
either shows it or comes before its every frame. A failed one is not shown."""

_KEPT = (
    select(D, R.c.meta.label("run_meta"))
    .select_from(D.outerjoin(R, R.c.id == D.c.run_id))
    .where(
        and_(
            D.c.channel == bindparam("channel"),
            D.c.to == bindparam("to"),
            D.c.kind == bindparam("kind"),
            D.c.outcome.in_(KEPT_OUTCOMES),
            D.c.created_at >= bindparam("since", type_=BigInteger),
        )
    )
    .order_by(D.c.id.desc())
    .limit(bindparam("limit", type_=Integer))
)
"""The newest deliveries of one kind to one chat, by `ix_deliveries_chat` (D136)."""

_KEPT_MEDIA = (
    select(C.c.delivery_id, M.c.id, M.c.name, M.c.mime, M.c.size, M.c.voice, C.c.text)
    .select_from(C.join(M, M.c.id == C.c.media_id))
    .where(C.c.delivery_id.in_(bindparam("ids", expanding=True)))
    .order_by(C.c.delivery_id, C.c.chunk_index)
)
"""The items the media chunks of the deliveries a chat's history shows send, in chunk order and
without their bytes, by the chunks' primary key (D192)."""


def _sent(media_id: str, name: str, mime: str, size: int, voice: bool, text: str) -> SentMedia:
    kind = media_kind(str(mime), bool(voice))
    return SentMedia(str(media_id), kind, str(name), str(mime), int(size), str(text))


def _origin(
    kind: str, session_key: str | None, meta: Any, run_id: str | None = None
) -> DeliveryOrigin:
    """The job (`meta.cronJob`) or hook (`meta.hook`) of a cron or webhook turn's run."""
    meta = meta if isinstance(meta, dict) else {}
    source = meta.get("cronJob") if kind == "cron" else meta.get("hook") if kind == "hook" else None
    return DeliveryOrigin(kind, session_key, str(source) if source else None, run_id)
