"""The one place that decides whether an inbound message may enter Crosstalk at all (D11).

The router asks :meth:`Admission.admit` before it touches any session: a refused sender never
creates a session row, never changes a reply route, never starts a run. Every refusal is logged
with channel, sender and reason, and counted per channel account for `/healthz`.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import TYPE_CHECKING

from core.engine.observability.metrics import DISCARD, Metrics
from core.features.access.pairing import PairingService
from core.features.access.policy import access_policy, judge, needs_approval_lookup
from core.model.inbound import InboundMessage

if TYPE_CHECKING:
    from core.config import CrosstalkConfig

log = logging.getLogger(__name__)


class Admission:
    def __init__(
        self, config: CrosstalkConfig, pairing: PairingService, *, metrics: Metrics = DISCARD
    ) -> None:
        self.config = config
        self.pairing = pairing
        self.metrics = metrics
        self._refused: Counter[tuple[str, str]] = Counter()

    def require_mention(self, msg: InboundMessage) -> bool | None:
        """The account's `groups.requireMention` (None for channels that are not guarded)."""
        policy = access_policy(self.config, msg.channel, msg.account_id)
        return None if policy is None else policy.require_mention

    async def admit(self, msg: InboundMessage) -> bool:
        policy = access_policy(self.config, msg.channel, msg.account_id)
        if policy is None:
            return True
        approved = needs_approval_lookup(policy, msg) and await self.pairing.is_approved(
            msg.channel, msg.account_id, msg.sender_id
        )
        verdict = judge(policy, msg, approved=approved)
        if verdict.admit:
            return True
        reason = await self.pairing.on_unknown_dm(msg) if verdict.pair else str(verdict.reason)
        self._refused[(msg.channel, msg.account_id)] += 1
        self.metrics.refusal(msg.channel, msg.account_id, reason)
        log.info(
            "refused %s message on %s/%s from sender %s (%s) in chat %s: %s",
            msg.chat_type,
            msg.channel,
            msg.account_id,
            msg.sender_id,
            msg.sender_name or "-",
            msg.chat_id,
            reason,
        )
        return False

    def refused(self, channel: str, account_id: str) -> int:
        """How many messages this channel account refused since the gateway started."""
        return self._refused[(channel, account_id)]
