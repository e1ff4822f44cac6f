"""DM pairing (D11): an unknown sender gets one code; the owner approves, denies or revokes.

The request lives in the store, so approvals survive restarts. The clock is injectable
(`PairingService.clock`) so that expiry is tested without sleeping. Every text goes out through
the outbound gate.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from core.engine.background import Spawn
from core.engine.outbound.delivery import Outbound
from core.features.access.policy import group_pairing_id
from core.model.delivery_context import DeliveryContext
from core.model.inbound import InboundMessage
from core.store import now_ms
from core.store.pairing import Approval, PairingRequest

if TYPE_CHECKING:
    from core.engine.outbound.gate import OutboundGate
    from core.store import Store

log = logging.getLogger(__name__)

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 8
REQUEST_TTL_MS = 60 * 60 * 1000
MAX_PENDING = 50
"""Pending requests per channel account; a new one drops the oldest beyond it (D81)."""
PREVIEW_CHARS = 200
INLINE_WAIT = 2.0
"""Seconds a pairing notice may hold the inbound path it was sent from (D104): a platform fault
on one stranger's chat is retried in the background, not while everyone else waits."""
APPROVED_TEXT = "✅ You are approved. Send your message again."
GROUP_APPROVED_TEXT = "✅ This group is approved. Mention me again to talk."
"""What an approved group is told (D103): the people in it were not approved one by one."""


def pairing_text(code: str) -> str:
    return f"🔐 This bot only talks to people its owner approved. Your pairing code: {code}"


def group_pairing_text(code: str) -> str:
    """D62's one answer in a group nobody approved."""
    return f"🔐 This group is not approved yet. An owner can approve it with the code {code}."


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


class PairingService:
    def __init__(
        self,
        store: Store,
        gate: OutboundGate,
        clock: Callable[[], int] = now_ms,
        *,
        spawn: Spawn | None = None,
    ) -> None:
        self.store = store
        self.gate = gate
        self.clock = clock
        self.spawn = spawn
        """Tracks notices still sending after :data:`INLINE_WAIT` (without it, they are awaited)."""
        self.inline_wait = INLINE_WAIT
        self.max_pending = MAX_PENDING
        self.on_revoked: Callable[[str], Awaitable[int]] | None = None
        """Stops the turns a revoked sender (`<channel>:<userId>`) left queued or running in
        their own chat; set by the runtime, which holds the runs."""
        self._lock = asyncio.Lock()  # check-then-insert: one request per sender, the cap

    async def _notify(self, out: Outbound) -> None:
        """Send a pairing notice, waiting for it at most :attr:`inline_wait` (D104): adapters
        hand inbound messages over one at a time, so a send the gate is still retrying (a 5xx,
        a timeout) would hold every other sender's message behind this one."""
        if self.spawn is None:
            await self.gate.deliver(out)
            return
        await asyncio.wait({self.spawn(self.gate.deliver(out))}, timeout=self.inline_wait)

    async def is_approved(self, channel: str, account_id: str, user_id: str) -> bool:
        return await self.store.is_approved(channel, account_id, user_id)

    async def on_unknown_dm(self, msg: InboundMessage) -> str:
        """Handle a DM of a sender nobody approved; returns the refusal reason to log."""
        return await self._request(msg, msg.sender_id, msg.sender_name, pairing_text)

    async def on_unknown_group(self, msg: InboundMessage) -> str:
        """A message to the bot in a group nobody approved (D62): one request for the group,
        stored like a sender's (`group:<chatId>`), one code in the group while it is pending."""
        title = msg.chat_title or None
        return await self._request(msg, group_pairing_id(msg.chat_id), title, group_pairing_text)

    async def _request(
        self,
        msg: InboundMessage,
        user_id: str,
        user_name: str | None,
        text: Callable[[str], str],
    ) -> str:
        async with self._lock:
            now = self.clock()
            code = new_code()
            while await self.store.code_exists(code):
                code = new_code()
            # checked and added atomically: other gateway processes share these rows (D29)
            refused = await self.store.add_request_once(
                PairingRequest(
                    code=code,
                    channel=msg.channel,
                    account_id=msg.account_id,
                    user_id=user_id,
                    user_name=user_name,
                    chat_id=msg.chat_id,
                    thread_id=None if msg.thread_id is None else str(msg.thread_id),
                    deliver_to=msg.reply_to.to or msg.chat_id,
                    preview=msg.text[:PREVIEW_CHARS],
                    status="pending",
                    created_at=now,
                    expires_at=now + REQUEST_TTL_MS,
                ),
                self.max_pending,
            )
            if refused is not None:
                return refused
        await self._notify(
            Outbound(text(code), "notice", None, target=msg.reply_to, chat_type=msg.chat_type)
        )
        return "not paired: pairing code sent"

    async def pending(self, channel: str | None = None) -> list[PairingRequest]:
        return await self.store.pending_requests(self.clock(), channel=channel)

    async def approved(self, channel: str | None = None) -> list[Approval]:
        return await self.store.approvals(channel=channel)

    async def approve(self, code: str, channel: str | None = None) -> PairingRequest | None:
        """Approve a pending request; the sender is told once, through the gate."""
        req = await self.store.settle_request(
            code.strip().upper(), self.clock(), "approved", channel
        )
        if req is not None:
            log.info(
                "pairing approved: %s/%s user %s (code %s)",
                req.channel,
                req.account_id,
                req.user_id,
                req.code,
            )
            group = req.user_id == group_pairing_id(req.chat_id)
            await self._notify(
                Outbound(
                    GROUP_APPROVED_TEXT if group else APPROVED_TEXT,
                    "notice",
                    None,
                    target=DeliveryContext(
                        channel=req.channel,
                        to=req.deliver_to,
                        account_id=req.account_id,
                        thread_id=req.thread_id,
                    ),
                    chat_type="group" if group else "direct",
                )
            )
        return req

    async def deny(self, code: str, channel: str | None = None) -> PairingRequest | None:
        req = await self.store.settle_request(code.strip().upper(), self.clock(), "denied", channel)
        if req is not None:
            log.info(
                "pairing denied: %s/%s user %s (code %s)",
                req.channel,
                req.account_id,
                req.user_id,
                req.code,
            )
        return req

    async def revoke(self, channel: str, user_id: str) -> bool:
        removed = await self.store.revoke_approval(channel, user_id.strip())
        if removed:
            log.info("pairing revoked: %s user %s", channel, user_id)
            creator = f"{channel}:{user_id.strip()}"
            reason = f"stopped: its creator {creator} was revoked"
            stopped = await self.store.disable_jobs_of(creator, self.clock(), reason)  # D81
            if stopped:
                log.info("cron: %d job(s) of %s stopped", stopped, creator)
            turns = await self.on_revoked(creator) if self.on_revoked is not None else 0
            if turns:
                log.info("%d turn(s) of %s stopped", turns, creator)
        return removed > 0
