"""Build the adapters the config asks for, through the channel registry (D38)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.config import CrosstalkConfig
from core.config.channel_registry import ChannelEnv
from core.config.channel_registry import build_adapters as _build
from core.model.channel import ChannelAdapter

if TYPE_CHECKING:
    from adapters.webchat.env import WebchatEnv


def build_adapters(config: CrosstalkConfig, runtime: WebchatEnv | None) -> list[ChannelAdapter]:
    """`runtime`: what the web chat reads (D30); the platform channels never see it."""
    env = ChannelEnv(runtime.state_dir if runtime is not None else None, runtime)
    return _build(config, env)
