"""Settle deliveries a dead process left `pending` (decision D16; see docs/DELIVERY.md).

Chunks are sent in order, so after a crash a delivery's first `pending` chunk is *in doubt* (it
may have reached the chat before its receipt was written) and the chunks after it were never
sent. The in-doubt chunk is settled as the platform allows: Discord drops a resend that
carries the same nonce, Slack is asked whether a message with the chunk's metadata exists, and
elsewhere (Telegram, the web chat) it is resent once and marked `resent_after_crash`. A media
chunk (D78) sends its stored item, settled by the adapter's `media_reconcile` where it has one.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Protocol

from core.engine.outbound.gate import send_chunk, send_media_chunk
from core.model.channel import ChannelAdapter, ChunkRef
from core.model.delivery_context import DeliveryContext
from core.model.errors import DeliveryError
from core.store import DeliveryRecord, now_ms

if TYPE_CHECKING:
    from core.config import CrosstalkConfig
    from core.engine.outbound.channels import ChannelRegistry
    from core.engine.outbound.gate import OutboundGate
    from core.store import Store

log = logging.getLogger(__name__)


class DeliveryParts(Protocol):
    """What the exactly-once duties (core.engine.watchdog, this module, D16)
    use."""

    @property
    def config(self) -> CrosstalkConfig: ...
    @property
    def store(self) -> Store: ...
    @property
    def gate(self) -> OutboundGate: ...
    @property
    def channels(self) -> ChannelRegistry: ...


@dataclass(frozen=True, slots=True)
class DeliveryDuties:
    """The concrete :class:`DeliveryParts` the runtime hands the watchdog (D30, D97)."""

    config: CrosstalkConfig
    store: Store
    gate: OutboundGate
    channels: ChannelRegistry


async def _connected(
    rt: DeliveryParts, rec: DeliveryRecord | DeliveryContext, wait: float
) -> ChannelAdapter | None:
    """The delivery's adapter once it is connected (channels connect in the background)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait
    while True:
        adapter = rt.channels.get(rec.channel or "", rec.account_id)
        if adapter is not None and adapter.status().state == "connected":
            return adapter
        if loop.time() >= deadline:
            return None
        await asyncio.sleep(0.2)


async def reconcile_delivery(rt: DeliveryParts, rec: DeliveryRecord, *, wait: float = 30.0) -> str:
    """Settle one pending delivery; returns its final outcome."""
    assert rec.id is not None
    chunks = (await rt.store.chunks_of([rec.id])).get(rec.id, [])
    media = await rt.store.media_by_id([c.media_id for c in chunks if c.media_id])
    adapter = await _connected(rt, rec, wait)
    if adapter is None:
        reason = f"in doubt after a restart: channel not connected: {rec.channel}"
        await rt.store.finish_delivery(rec.id, "failed", reason, rec.attempts)
        return "failed"
    target = DeliveryContext(
        channel=rec.channel, to=rec.to, account_id=rec.account_id, thread_id=rec.thread_id
    )
    outcome, reason = "delivered", "reconciled after a restart"
    in_doubt = True
    for chunk in chunks:
        if chunk.state != "pending":
            continue
        ref = ChunkRef(rec.id, chunk.chunk_index)
        item = media.get(chunk.media_id) if chunk.media_id else None
        mode = (adapter.media_reconcile or adapter.reconcile) if item else adapter.reconcile
        try:
            if chunk.media_id and item is None:
                raise DeliveryError(f"the stored media {chunk.media_id} is gone")
            if in_doubt and mode == "lookup":
                found = await adapter.find_chunk(target, ref)
                if found is not None:
                    await rt.store.mark_chunk(
                        rec.id, chunk.chunk_index, "sent", message_id=found.message_id
                    )
                    in_doubt = False
                    continue
            send = (
                partial(send_media_chunk, adapter, target, item, ref)
                if item is not None
                else partial(send_chunk, adapter, target, chunk.text, ref)
            )
            receipt = await rt.gate.retrying(send)
        except DeliveryError as exc:
            why = f"{type(exc).__name__}: {exc}"
            await rt.store.mark_chunk(rec.id, chunk.chunk_index, "failed", reason=why)
            await rt.store.finish_delivery(rec.id, "failed", why, rec.attempts + 1)
            return "failed"
        if in_doubt and mode == "resend":
            await rt.store.mark_chunk(
                rec.id,
                chunk.chunk_index,
                "resent_after_crash",
                message_id=receipt.message_id,
            )
            outcome = "resent_after_crash"
            reason = (
                f"chunk {chunk.chunk_index + 1} of {len(chunks)} was in doubt after a "
                "restart and was sent once more"
            )
        else:
            await rt.store.mark_chunk(
                rec.id, chunk.chunk_index, "sent", message_id=receipt.message_id
            )
        in_doubt = False
    await rt.store.finish_delivery(rec.id, outcome, reason, rec.attempts + 1)
    return outcome


async def reconcile_pending(
    rt: DeliveryParts, *, before_ms: int, wait: float = 30.0, grace_ms: int = 0
) -> dict[str, int]:
    """Settle every delivery an earlier process left pending (opened before `before_ms`);
    returns how many ended with each outcome.

    Only a delivery quiet for `grace_ms` is touched: another live gateway on the same database
    may still be sending it (its chunks are written as they go), and it is re-checked later.
    """
    counts: dict[str, int] = {}
    done: set[int] = set()
    while True:
        recs = [r for r in await rt.store.pending_deliveries(before_ms) if r.id not in done]
        if not recs:
            break
        active = await rt.store.last_activity([r.id for r in recs if r.id is not None])
        quiet_before = now_ms() - grace_ms
        ready = [r for r in recs if max(r.created_at, active.get(r.id or 0, 0)) < quiet_before]
        for rec in ready:
            done.add(rec.id or 0)
            try:
                outcome = await reconcile_delivery(rt, rec, wait=wait)
            except Exception:
                log.exception("reconciling delivery %s failed", rec.id)
                continue
            counts[outcome] = counts.get(outcome, 0) + 1
        if len(ready) == len(recs):
            break
        await asyncio.sleep(max(0.05, min(grace_ms / 2000, 5.0)))
    if counts:
        log.warning("settled deliveries left in doubt by the last run: %s", counts)
    return counts


async def deliver_orphan_replies(
    rt: DeliveryParts, *, before_ms: int, grace_ms: int = 0, window_ms: int = 86_400_000
) -> int:
    """Deliver replies whose turn finished just before a crash but never reached the gate
    (only turns that ended `grace_ms` ago: a live process may be about to deliver)."""
    if grace_ms:
        await asyncio.sleep(grace_ms / 1000)
    from core.engine.outbound.run_end import deliver_run_end
    from core.model.delivery_context import normalize_delivery_context

    sent = 0
    for run in await rt.store.undelivered_replies(
        since_ms=before_ms - window_ms,
        before_ms=before_ms,
        ended_before_ms=now_ms() - grace_ms,
    ):
        entry = await rt.store.get_session(run.session_key)
        if entry is None:
            continue
        msgs = await rt.store.history(entry.session_id, run_id=run.id, include_tools=False)
        reply = next((m.plain_text() for m in reversed(msgs) if m.role == "assistant"), "")
        origin = (run.meta or {}).get("origin")
        target = normalize_delivery_context(origin) if isinstance(origin, dict) else None
        if not reply.strip():
            continue
        if target is not None:
            await _connected(rt, target, 30.0)
        await deliver_run_end(
            rt.gate,
            session_key=run.session_key,
            run_id=run.id,
            target=target,
            status="ok",
            reply=reply,
        )
        sent += 1
    if sent:
        log.warning("delivered %d reply(ies) a crash had kept from their chats", sent)
    return sent
