"""Telegram channel (python-telegram-bot 22.8); imported only when ``channels.telegram`` is set."""

from __future__ import annotations

from adapters.base import ChannelAdapter
from adapters.telegram.adapter import TelegramAdapter
from core.api.channels import TelegramConfig

__all__ = ["TelegramAdapter", "build"]


def build(section: TelegramConfig, runtime: object = None) -> list[ChannelAdapter]:
    """One adapter per configured account (``default`` = the section's top-level fields)."""
    return [TelegramAdapter(account, account_id) for account_id, account in section.iter_accounts()]
