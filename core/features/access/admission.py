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
from core.model.roles import Role

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

    async def admit(self, msg: InboundMessage) -> Role | None:
        """The sender's role (D60) when the message may enter, else None (refused, logged)."""
        policy = access_policy(self.config, msg.channel, msg.account_id)
        if policy is None:
            return self.unguarded_role(msg)
        approved = needs_approval_lookup(policy, msg) and await self.pairing.is_approved(
            msg.channel, msg.account_id, msg.sender_id
        )
        verdict = judge(policy, msg, approved=approved)
        if verdict.admit:
            return verdict.role
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
        return None

    async def allows(self, msg: InboundMessage) -> bool:
        """The channel protocol's yes/no form of :meth:`admit` (D36: e.g. a Matrix invite)."""
        return await self.admit(msg) is not None

    def unguarded_role(self, msg: InboundMessage) -> Role:
        """A channel D11 does not guard (the web chat, in-process adapters registered by code):
        its `owners` (the web chat's default `*`: the token holder) are owners; anyone else was
        let in by code, a member."""
        section = getattr(self.config.channels, msg.channel, None)
        owners = list(getattr(section, "owners", None) or [])
        return "owner" if "*" in owners or msg.sender_id in owners else "member"

    def refused(self, channel: str, account_id: str) -> int:
        """How many messages this channel account refused since the gateway started."""
        return self._refused[(channel, account_id)]
