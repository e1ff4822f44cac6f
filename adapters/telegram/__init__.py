"""Telegram channel (python-telegram-bot 22.8); imported only when ``channels.telegram`` is set."""

from __future__ import annotations

from typing import TYPE_CHECKING

from adapters.base import ChannelAdapter
from adapters.telegram.adapter import TelegramAdapter
from core.config import TelegramConfig

if TYPE_CHECKING:
    from core.runtime import Runtime

__all__ = ["TelegramAdapter", "build"]


def build(section: TelegramConfig, runtime: Runtime) -> list[ChannelAdapter]:
    """One adapter per configured account (``default`` = the section's top-level fields)."""
    return [TelegramAdapter(account, account_id)
            for account_id, account in section.iter_accounts()]
