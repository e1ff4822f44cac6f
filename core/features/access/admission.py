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
from core.features.access.policy import (
    access_policy,
    group_pairing_id,
    judge,
    needs_approval_lookup,
    needs_group_lookup,
)
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

    async def admit(self, msg: InboundMessage, *, probe: bool = False) -> Role | None:
        """The sender's role (D60) when the message may enter, else None (refused, logged).

        `probe`: a channel asking before it joins (an invitation): a group that needs approval
        is joined without a request; its first message addressed to the bot asks (D62)."""
        policy = access_policy(self.config, msg.channel, msg.account_id)
        if policy is None:
            return self.unguarded_role(msg)
        approved = needs_approval_lookup(policy, msg) and await self.pairing.is_approved(
            msg.channel, msg.account_id, msg.sender_id
        )
        group_approved = needs_group_lookup(policy, msg) and await self.pairing.is_approved(
            msg.channel, msg.account_id, group_pairing_id(msg.chat_id)
        )
        verdict = judge(policy, msg, approved=approved, group_approved=group_approved)
        if verdict.admit:
            return verdict.role
        if not verdict.pair:
            reason = str(verdict.reason)
        elif msg.button:  # a press asks for nothing: no pairing code (D121, D126)
            reason = "button press by a sender not admitted"
        elif msg.chat_type == "direct":
            reason = await self.pairing.on_unknown_dm(msg)
        elif self._addressed(msg, policy.require_mention) and not probe:
            reason = await self.pairing.on_unknown_group(msg)
        else:  # only a message that would start a run asks for approval (D62)
            reason = "group not approved"
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
        """The channel protocol's yes/no form of :meth:`admit` (D36: e.g. a Matrix invite);
        a group awaiting approval may be joined, so its approval can be asked there (D62)."""
        policy = access_policy(self.config, msg.channel, msg.account_id)
        if policy is not None and needs_group_lookup(policy, msg):
            return True
        return await self.admit(msg, probe=True) is not None

    @staticmethod
    def _addressed(msg: InboundMessage, require_mention: bool) -> bool:
        return msg.mentioned or msg.reply_to_bot or not require_mention

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
