"""The outbound gate: the single path by which any text leaves Crosstalk towards a chat.

Agent replies, announces, tool sends, command replies and system notices all call
:meth:`OutboundGate.deliver`; media (images, files, voice notes) ride in the same delivery, one
chunk per item after the text's chunks (D78). It runs a `next()`-style chain (policy → retry →
send, in the manner of slack-bolt middleware), then writes one delivery-log row per attempt,
whatever the outcome. The policy is the source session's and, when the delivery lands in another
chat (a cron job's, a hook's, an announce, a tool send), that chat's too: a muted target stays
silent (D140). Inbound admission and run admission ask the same gate
(:meth:`OutboundGate.decide`), so the send policy is resolved in exactly one place.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from core.engine.observability.metrics import DISCARD, Metrics
from core.engine.outbound.channels import ChannelRegistry
from core.engine.outbound.delivery import Attempt, DeliveryResult, Middleware, Next, Outbound
from core.engine.outbound.retry import SendRetry, chat_key
from core.engine.outbound.target_policy import TargetOf, target_decision
from core.model.channel import ChannelAdapter, ChunkRef, SendReceipt
from core.model.chunking import cut_reply
from core.model.delivery_context import DeliveryContext, session_target
from core.model.errors import ChannelUnavailable, DeliveryError, RateLimited
from core.model.media import MediaItem, too_big_text, unsupported_text
from core.model.send_policy import PolicyDecision, SendPolicySpec, resolve_send_policy
from core.store import DeliveryRecord, SessionEntry, Store, now_ms

log = logging.getLogger(__name__)
T = TypeVar("T")


class OutboundGate:
    def __init__(
        self,
        store: Store,
        channels: ChannelRegistry,
        policy: SendPolicySpec | None,
        *,
        max_retries: int = 3,
        max_retry_wait: float = 30.0,
        retry_backoff: float = 1.0,
        max_reply_chars: int = 16_000,
        extra_middleware: Sequence[Middleware] = (),
        metrics: Metrics = DISCARD,
    ) -> None:
        self.store = store
        self.metrics = metrics
        self.channels = channels
        self.policy = policy
        self.retry = SendRetry(
            max_retries=max_retries, max_retry_wait=max_retry_wait, backoff=retry_backoff
        )
        self.max_reply_chars = max_reply_chars
        """A longer text is cut, with a note, before it is chunked (D142)."""
        self._chain: list[Middleware] = [self._policy_step, *extra_middleware, self._retry_step]

    @property
    def max_retries(self) -> int:
        return self.retry.max_retries

    def decide(self, entry: SessionEntry | None, session_key: str | None = None) -> PolicyDecision:
        """Resolve the send policy of a session (override > deny rule > allow rule > default)."""
        return resolve_send_policy(
            self.policy,
            override=entry.send_policy if entry else None,
            session_key=entry.key if entry else session_key,
            channel=(entry.channel or entry.last_channel) if entry else None,
            chat_type=entry.chat_type if entry else None,
        )

    async def deliver(self, message: Outbound) -> DeliveryResult:
        entry = await self.store.get_session(message.session_key) if message.session_key else None
        attempt = Attempt(
            message=message, entry=entry, target=message.target or session_target(entry)
        )
        try:
            result = await self._run_chain(attempt, 0)
        except Exception as exc:  # a bug in a step must still leave a log row
            log.exception("outbound chain crashed")
            result = DeliveryResult("failed", f"internal error: {exc}", attempts=attempt.attempts)
        result.attempts = attempt.attempts
        await self._record(attempt, result)
        return result

    async def _live_adapter(
        self, session_key: str, target: DeliveryContext | None
    ) -> ChannelAdapter | None:
        """The adapter a preview or typing indicator goes to, if the policy lets the session
        speak there at all (the same decision as its final reply)."""
        if target is None or not target.channel:
            return None
        entry = await self.store.get_session(session_key)
        if self.decide(entry, session_key).action == "deny":
            return None
        return self.channels.get(target.channel, target.account_id)

    async def preview(
        self, session_key: str, target: DeliveryContext | None, run_id: str, text: str
    ) -> bool:
        """Show a streaming partial reply, under the same policy as the final delivery.

        Previews are transient (the final text is delivered and logged through `deliver`), so
        they are not written to the delivery log.
        """
        adapter = await self._live_adapter(session_key, target)
        if adapter is None or target is None or self.retry.held(chat_key(target)):
            return False  # a rate-limited chat gets no preview until its hold ends (D142)
        try:
            await adapter.send_preview(target, run_id, text)
        except DeliveryError as exc:  # best effort: the final reply still goes through deliver
            self._limited(target, exc)
            log.debug("preview for %s not shown: %s", session_key, exc)
            return False
        return True

    async def end_preview(self, target: DeliveryContext, run_id: str, status: str) -> None:
        """A previewed run ended without a reply: the adapter settles its partial message."""
        adapter = self.channels.get(target.channel or "", target.account_id)
        if adapter is not None:
            try:
                await adapter.end_preview(target, run_id, status)
            except DeliveryError as exc:
                log.debug("ending preview %s: %s", run_id, exc)

    async def edit(
        self, session_key: str | None, target: DeliveryContext, message_id: str, text: str
    ) -> DeliveryResult:
        """Replace a sent message's text and drop its buttons (a decided question, D72); the
        same policy as `deliver`, and a delivery-log row like any other outbound attempt."""
        entry = await self.store.get_session(session_key) if session_key else None
        attempt = Attempt(Outbound(text, "approval", session_key, target), entry, target)
        decision = attempt.decision = self.decide(entry, session_key)
        adapter = self.channels.get(target.channel or "", target.account_id)
        if decision.action == "deny":
            result = DeliveryResult("suppressed_by_policy", decision.reason)
        elif adapter is None:
            result = DeliveryResult("failed", f"channel not connected: {target.channel}")
        else:
            attempt.attempts = 1
            try:
                await self.retrying(lambda: adapter.edit_text(target, message_id, text))
                result = DeliveryResult("delivered", f"edited {message_id}")
            except DeliveryError as exc:
                result = DeliveryResult("failed", f"{type(exc).__name__}: {exc}")
        result.attempts = attempt.attempts
        await self._record(attempt, result)
        return result

    async def react(
        self, session_key: str | None, target: DeliveryContext, message_id: str, emoji: str | None
    ) -> bool:
        """Set (or with None clear) the bot's reaction on a message (D74), under the same
        policy as the session's replies; best effort, like typing."""
        adapter = await self._live_adapter(session_key or "", target) if session_key else None
        if adapter is None:
            return False
        try:
            await adapter.react(target, message_id, emoji)
        except DeliveryError as exc:
            log.debug("reaction on %s not set: %s", message_id, exc)
            return False
        return True

    async def typing(self, session_key: str, target: DeliveryContext | None) -> bool:
        """Show "typing…" while a run is active, under the same policy as its reply."""
        adapter = await self._live_adapter(session_key, target)
        if adapter is None or target is None or self.retry.held(chat_key(target)):
            return False
        try:
            await adapter.send_typing(target)
        except DeliveryError as exc:
            self._limited(target, exc)
            log.debug("typing for %s not shown: %s", session_key, exc)
            return False
        return True

    def _limited(self, target: DeliveryContext, exc: DeliveryError) -> None:
        """A rate limit met by a preview or typing holds the chat for every send (D142)."""
        if isinstance(exc, RateLimited):
            self.retry.hold(chat_key(target), exc.retry_after)

    async def _run_chain(self, attempt: Attempt, index: int) -> DeliveryResult:
        if index == len(self._chain):
            return await self._send_step(attempt)
        step = self._chain[index]
        return await step(attempt, lambda: self._run_chain(attempt, index + 1))

    async def decide_target(
        self, message: Outbound, entry: SessionEntry | None, decision: PolicyDecision
    ) -> PolicyDecision:
        """`decision` (the source's), or a deny of the chat the delivery lands in (D140), that
        chat named as the platform's own messages name it (D179: `tg:-100123` is `-100123`)."""
        target = message.target
        adapter = (
            self.channels.get(target.channel, target.account_id)
            if target is not None and target.channel
            else None
        )
        if target is not None and target.to and adapter is not None:
            to = adapter.chat_of(str(target.to))
            target = target if to == target.to else target.model_copy(update={"to": to})
        return await target_decision(
            self.store,
            self.decide,
            self.policy,
            TargetOf(message.session_key, target, entry, message.chat_type),
            decision,
        )

    async def _policy_step(self, attempt: Attempt, nxt: Next) -> DeliveryResult:
        decision = self.decide(attempt.entry, attempt.message.session_key)
        decision = await self.decide_target(attempt.message, attempt.entry, decision)
        attempt.decision = decision
        if decision.action == "deny":
            if not attempt.message.owner_command:
                return DeliveryResult("suppressed_by_policy", decision.reason)
            attempt.note = f"owner command reply despite deny ({decision.reason})"
        return await nxt()

    async def _retry_step(self, attempt: Attempt, nxt: Next) -> DeliveryResult:
        try:
            return await self.retrying(nxt, chat_key(attempt.target))
        except RateLimited as exc:
            return DeliveryResult(
                "failed", f"rate limited after {attempt.attempts} attempts: {exc}"
            )
        except ChannelUnavailable as exc:  # a platform fault that did not pass (D142)
            return DeliveryResult(
                "failed",
                f"{type(exc).__name__}: {exc} (after {attempt.attempts} attempts)",
                receipts=self._receipts(attempt),
            )

    async def retrying(self, send: Callable[[], Awaitable[T]], key: str | None = None) -> T:
        """The retry step (:class:`SendRetry`): `send` again after a rate limit or a platform
        fault that may pass, bounded; then the error is raised. Recovery resends an in-doubt
        chunk through it too (D16, D99), not through a loop of its own."""
        return await self.retry.run(send, key)

    async def _send_step(self, attempt: Attempt) -> DeliveryResult:
        """Send the chunks that have no receipt yet (a retry resumes at the failed chunk).

        The delivery row and its `pending` chunks are written before the first send, and each
        chunk's platform message id as soon as it is sent (D16), so a restart knows which
        chunk reached the chat and which one is in doubt.
        """
        target = attempt.target
        if target is None or not target.channel or not target.to:
            return DeliveryResult("failed", "no delivery target for this session")
        adapter = self.channels.get(target.channel, target.account_id)
        if adapter is None:
            return DeliveryResult("failed", f"channel not connected: {target.channel}")
        attempt.attempts += 1
        if attempt.delivery_id is None:
            media_ids = await self._plan(attempt, adapter)
            attempt.delivery_id = await self.store.open_delivery(
                self._row(attempt, "pending", None), attempt.chunks, media_ids
            )
        run_id = attempt.message.run_id if attempt.message.kind == "reply" else None
        for index, chunk in enumerate(attempt.chunks):
            if index in attempt.receipts:
                continue  # reached the chat already: never again
            await self.retry.wait(chat_key(target))  # a 429 met elsewhere holds this chat too
            try:
                ref = ChunkRef(attempt.delivery_id, index)
                item = attempt.media.get(index)
                if item is not None:
                    receipt = await send_media_chunk(adapter, target, item, ref)
                elif run_id and index == 0:  # the run's live preview becomes its reply
                    receipt = await adapter.send_final(target, run_id, chunk)
                elif attempt.message.buttons and index == len(attempt.chunks) - 1:
                    receipt = await adapter.send_buttons(target, chunk, attempt.message.buttons)
                else:
                    receipt = await send_chunk(adapter, target, chunk, ref)
            except (RateLimited, ChannelUnavailable):
                raise  # the retry step's to handle
            except DeliveryError as exc:
                reason = f"{type(exc).__name__}: {exc}"
                await self.store.mark_chunk(attempt.delivery_id, index, "failed", reason=reason)
                return DeliveryResult("failed", reason, receipts=self._receipts(attempt))
            attempt.receipts[index] = receipt
            await self.store.mark_chunk(
                attempt.delivery_id, index, "sent", message_id=receipt.message_id
            )
        return DeliveryResult("delivered", attempt.note, receipts=self._receipts(attempt))

    async def _plan(self, attempt: Attempt, adapter: ChannelAdapter) -> list[str | None]:
        """The delivery's chunks: the text's, then one per media item (its placeholder), or a
        text naming an item the platform cannot take (D150). Returns each chunk's media id."""
        message = attempt.message
        attempt.chunks = (
            adapter.chunks(cut_reply(message.text, self.max_reply_chars))
            if message.text.strip() or not message.media
            else []
        )
        media_ids: list[str | None] = [None] * len(attempt.chunks)
        unsaved = [m for m in message.media if m.id is None]
        if unsaved:  # stored before the delivery opens, so a restart can resend them (D16)
            saved = iter(
                await self.store.save_media(
                    unsaved, run_id=message.run_id, session_key=message.session_key
                )
            )
            message.media = [m if m.id else next(saved) for m in message.media]
        for item in message.media:
            limit = adapter.media_limit_for(item)
            if limit <= 0:
                attempt.chunks.append(unsupported_text(item))
                media_ids.append(None)
            elif item.size > limit:
                attempt.chunks.append(too_big_text(item, limit))
                media_ids.append(None)
            else:
                attempt.media[len(attempt.chunks)] = item
                attempt.chunks.append(item.placeholder())
                media_ids.append(item.id)
        return media_ids

    @staticmethod
    def _receipts(attempt: Attempt) -> list[SendReceipt]:
        return [attempt.receipts[i] for i in sorted(attempt.receipts)]

    def _row(self, attempt: Attempt, outcome: str, reason: str | None) -> DeliveryRecord:
        t = attempt.target
        return DeliveryRecord(
            kind=attempt.message.kind,
            outcome=outcome,
            text=attempt.message.logged_text(),
            created_at=now_ms(),
            session_key=attempt.message.session_key,
            reason=reason,
            channel=t.channel if t else None,
            to=t.to if t else None,
            account_id=t.account_id if t else None,
            thread_id=str(t.thread_id) if t and t.thread_id is not None else None,
            run_id=attempt.message.run_id,
            attempts=attempt.attempts,
        )

    async def _record(self, attempt: Attempt, result: DeliveryResult) -> None:
        reason = result.reason
        if result.outcome == "delivered" and attempt.decision is not None and reason is None:
            reason = f"allowed: {attempt.decision.reason}"
        if attempt.delivery_id is not None:
            await self.store.finish_delivery(
                attempt.delivery_id, result.outcome, reason, attempt.attempts
            )
            result.delivery_id = attempt.delivery_id
        else:
            result.delivery_id = await self.store.record_delivery(
                self._row(attempt, result.outcome, reason)
            )
        t = attempt.target
        self.metrics.delivery(t.channel if t else None, attempt.message.kind, result.outcome)
        if result.outcome != "delivered":
            log.info(
                "delivery %s for %s: %s", result.outcome, attempt.message.session_key, result.reason
            )


async def send_chunk(
    adapter: ChannelAdapter, target: DeliveryContext, text: str, ref: ChunkRef
) -> SendReceipt:
    """The one call that puts a chunk on a platform (replies, notices, reconciliation)."""
    if adapter.chunk_refs:
        return await adapter.send_text(target, text, ref=ref)  # type: ignore[call-arg]
    return await adapter.send_text(target, text)


async def send_media_chunk(
    adapter: ChannelAdapter, target: DeliveryContext, item: MediaItem, ref: ChunkRef
) -> SendReceipt:
    """The one call that puts a media item on a platform (replies, reconciliation; D78)."""
    return await adapter.send_media(target, item, ref)
