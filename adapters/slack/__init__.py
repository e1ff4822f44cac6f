"""Slack channel: one :class:`SlackAdapter` per configured account (slack-bolt, async)."""

from __future__ import annotations

from adapters.base import ChannelAdapter
from adapters.slack.adapter import SlackAdapter
from core.api.channels import SlackConfig

__all__ = ["SlackAdapter", "build"]


def build(section: SlackConfig, runtime: object = None) -> list[ChannelAdapter]:
    """One adapter per account of ``channels.slack`` (``default`` first)."""
    return [SlackAdapter(config, account_id) for account_id, config in section.iter_accounts()]
