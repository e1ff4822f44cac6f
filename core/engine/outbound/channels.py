"""Which adapter serves which (channel, account); only the outbound gate sends through it."""

from __future__ import annotations

import logging
from collections.abc import Iterator

from core.model.attachments import Attachment
from core.model.channel import AdapterStatus, ChannelAdapter

log = logging.getLogger(__name__)


class ChannelRegistry:
    """Running adapters keyed by channel and account id."""

    def __init__(self) -> None:
        self._adapters: dict[tuple[str, str], ChannelAdapter] = {}

    def add(self, adapter: ChannelAdapter) -> None:
        self._adapters[(adapter.channel, adapter.account_id)] = adapter

    def get(self, channel: str, account_id: str | None = None) -> ChannelAdapter | None:
        found = self._adapters.get((channel, account_id or "default"))
        if found is None and account_id is None:
            found = next((a for (c, _), a in self._adapters.items() if c == channel), None)
        return found

    async def fetch(
        self, channel: str, account_id: str | None, attachment: Attachment, limit: int
    ) -> bytes | None:
        """An attachment's bytes from the adapter that received it; None when no adapter serves
        the account, the fetch fails (logged: the model still hears of it, as a placeholder) or
        the file is over `limit` bytes."""
        if attachment.size is not None and attachment.size > limit:
            return None
        adapter = self.get(channel, account_id)
        if adapter is None:
            return None
        try:
            data = await adapter.fetch_attachment(attachment)
        except Exception as exc:
            log.warning("could not fetch %s from %s: %s", attachment.name, channel, exc)
            return None
        return None if data is None or len(data) > limit else data

    def __iter__(self) -> Iterator[ChannelAdapter]:
        return iter(list(self._adapters.values()))

    def statuses(self) -> list[AdapterStatus]:
        return [a.status() for a in self._adapters.values()]
