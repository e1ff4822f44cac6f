"""Build the adapters the config asks for; a channel's SDK is imported only when configured."""

from __future__ import annotations

from typing import TYPE_CHECKING

from adapters.base import ChannelAdapter
from core.config import CrosstalkConfig

if TYPE_CHECKING:
    from core.runtime import Runtime


def build_adapters(config: CrosstalkConfig, runtime: Runtime) -> list[ChannelAdapter]:
    out: list[ChannelAdapter] = []
    channels = config.channels
    if channels.webchat.enabled:
        from adapters.webchat import WebchatAdapter

        out.append(WebchatAdapter(runtime))
    for name in ("telegram", "discord", "slack"):
        section = getattr(channels, name, None)
        if section is None or not section.enabled:
            continue
        module = __import__(f"adapters.{name}", fromlist=["build"])
        out.extend(module.build(section, runtime))
    return out
