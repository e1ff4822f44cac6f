"""Late delivery failures (D166): a platform accepted a chunk, the gate logged it delivered,
and later the platform reported that it could not deliver it (WhatsApp's `failed` status).
The delivery log is corrected, so the failure is as visible as one at send time
(`crosstalk deliveries --outcome failed`, `deliveriesFailed` in `/healthz`)."""

from __future__ import annotations

import logging

from core.store import Store

log = logging.getLogger(__name__)


class LedgerReports:
    """The runtime's :class:`core.model.channel.DeliveryReports`."""

    def __init__(self, store: Store) -> None:
        self.store = store

    async def failed(self, channel: str, account_id: str, message_id: str, reason: str) -> bool:
        delivery_id = await self.store.fail_sent_chunk(channel, account_id, message_id, reason)
        if delivery_id is None:
            log.info(
                "%s/%s reported message %s failed; no delivery sent it (%s)",
                channel,
                account_id,
                message_id,
                reason,
            )
            return False
        log.warning(
            "delivery %s failed after %s/%s accepted it: %s",
            delivery_id,
            channel,
            account_id,
            reason,
        )
        return True
