"""Which adapter serves which (channel, account); only the outbound gate sends through it."""

from __future__ import annotations

from collections.abc import Iterator

from core.model.channel import AdapterStatus, ChannelAdapter


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

    def __iter__(self) -> Iterator[ChannelAdapter]:
        return iter(list(self._adapters.values()))

    def statuses(self) -> list[AdapterStatus]:
        return [a.status() for a in self._adapters.values()]
