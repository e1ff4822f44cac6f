"""Redelivered inbound messages (decision D16): their claims, and a count per channel account.

A platform that redelivers (Telegram after an unconfirmed offset, Slack retries, a Discord
RESUME, a client retrying an HTTP request) sends the same identity again; the router drops it
before any run or reply, logs it at debug level and counts it here for `/healthz` and
`crosstalk channels status`.
"""

from __future__ import annotations

import logging
from collections import Counter

from core.model.inbound import InboundMessage
from core.store.inbound import Claim

log = logging.getLogger(__name__)


def claims_of(msg: InboundMessage) -> tuple[Claim, ...]:
    return tuple(Claim(msg.channel, msg.account_id, i) for i in msg.identities)


class DuplicateCounter:
    """Redeliveries dropped since this process started, per (channel, account)."""

    def __init__(self) -> None:
        self._counts: Counter[tuple[str, str]] = Counter()

    def dropped(self, channel: str, account_id: str, identity: str) -> None:
        self._counts[(channel, account_id or "default")] += 1
        log.debug("dropped redelivered message on %s/%s (%s)", channel, account_id, identity)

    def count(self, channel: str, account_id: str) -> int:
        return self._counts[(channel, account_id or "default")]
