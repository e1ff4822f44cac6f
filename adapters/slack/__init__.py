"""Slack channel: one :class:`SlackAdapter` per configured account (slack-bolt, async)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from adapters.base import ChannelAdapter
from adapters.slack.adapter import SlackAdapter
from core.config.schema_channels import SlackConfig

if TYPE_CHECKING:
    from core.runtime import Runtime

__all__ = ["SlackAdapter", "build"]


def build(section: SlackConfig, runtime: Runtime) -> list[ChannelAdapter]:
    """One adapter per account of ``channels.slack`` (``default`` first)."""
    return [SlackAdapter(config, account_id) for account_id, config in section.iter_accounts()]
