"""Crosstalk's own channels as channel-registry entries (D38), the entry points of the
``crosstalk.channels`` group in pyproject.toml. No SDK is imported here: each adapter class is
named by a string and imported only when its channel is configured."""

from __future__ import annotations

from core.api.channels import ChannelSpec, DiscordConfig, SlackConfig, TelegramConfig, WebchatConfig

WEBCHAT = ChannelSpec(
    "webchat", WebchatConfig, "adapters.webchat:WebchatAdapter", order=0, guarded=False
)  # its user holds the gateway token (D39)
TELEGRAM = ChannelSpec("telegram", TelegramConfig, "adapters.telegram:TelegramAdapter", order=1)
DISCORD = ChannelSpec("discord", DiscordConfig, "adapters.discord:DiscordAdapter", order=2)
SLACK = ChannelSpec("slack", SlackConfig, "adapters.slack:SlackAdapter", order=3)
