"""Discord channel (discord.py 2.7): one `DiscordAdapter` per configured account."""

from __future__ import annotations

from typing import Any

from adapters.base import ChannelAdapter
from adapters.discord.adapter import DiscordAdapter
from core.api.channels import DiscordConfig

__all__ = ["DiscordAdapter", "build"]


def build(section: DiscordConfig, runtime: object = None, **options: Any) -> list[ChannelAdapter]:
    """One adapter per account of `channels.discord`; `options` tune timeouts (tests)."""
    return [
        DiscordAdapter(account, account_id, **options)
        for account_id, account in section.iter_accounts()
    ]
