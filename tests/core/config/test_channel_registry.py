"""The channel registry (D38): built-ins come from entry points in order, every adapter is
built as `Adapter(config, account_id, env)`, and a third-party channel follows its plugin."""

from __future__ import annotations

from typing import Any

import pytest

from core.api.channels import (
    AdapterStatus,
    ChannelAdapter,
    DeliveryContext,
    InboundSink,
    SendReceipt,
)
from core.config import CrosstalkConfig, validate_config
from core.config.channel_registry import ChannelSpec, installed_channels
from core.config.schema_base import ConfigModel
from core.engine.channels import build as channel_build
from core.engine.channels.build import ChannelEnv, build_adapters


def test_builtins_are_entry_points_in_order() -> None:
    found = installed_channels()
    builtin = [name for name, spec in found.items() if spec.dist == "crosstalk"]
    assert builtin[:4] == ["webchat", "telegram", "discord", "slack"]
    assert {"whatsapp", "signal", "matrix", "email"} <= set(builtin[4:])  # their own (D77)
    assert found["telegram"].adapter == "adapters.telegram.adapter:TelegramAdapter"  # a string
    assert found["whatsapp"].adapter == "adapters.whatsapp.adapter:WhatsAppAdapter"
    assert found["signal"].adapter == "adapters.signal.adapter:SignalAdapter"


def test_one_constructor_per_account() -> None:
    config = validate_config(
        {
            "channels": {
                "webchat": {"enabled": False},
                "slack": {
                    "botToken": "xoxb-1",
                    "appToken": "xapp-1",
                    "accounts": {"ops": {"botToken": "xoxb-2", "appToken": "xapp-2"}},
                },
            }
        }
    )
    env = ChannelEnv()
    adapters = build_adapters(config, env)
    assert [(a.channel, a.account_id) for a in adapters] == [("slack", "default"), ("slack", "ops")]


class LoopConfig(ConfigModel):
    enabled: bool = True


class LoopAdapter(ChannelAdapter):
    channel = "loop"

    def __init__(self, config: LoopConfig, account_id: str, env: ChannelEnv) -> None:
        self.account_id, self.env = account_id, env

    async def start(self, sink: InboundSink) -> None:
        return None

    async def stop(self) -> None:
        return None

    async def send_text(self, target: DeliveryContext, text: str) -> SendReceipt:
        return SendReceipt()

    def status(self) -> AdapterStatus:
        return AdapterStatus(self.channel, self.account_id, "connected")


def test_a_third_party_channel_follows_its_plugin(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = ChannelSpec("loop", LoopConfig, LoopAdapter, dist="loop-dist")
    monkeypatch.setattr(
        channel_build, "installed_channels", lambda: {**installed_channels(), "loop": spec}
    )
    monkeypatch.setattr(
        channel_build,
        "_plugin_dists",
        lambda: {"chat-commands": "crosstalk", "loop-plugin": "loop-dist"},
    )
    config = CrosstalkConfig()
    assert "loop" in [s.name for s in channel_build.selected_channels(config)]
    off = validate_config({"plugins": {"disabled": ["loop-plugin"]}})
    assert "loop" not in [s.name for s in channel_build.selected_channels(off)]
    builtins_stay = validate_config({"plugins": {"enabled": ["loop-plugin"]}})
    assert "telegram" in [s.name for s in channel_build.selected_channels(builtins_stay)]


def test_accounts_default_to_the_section() -> None:
    spec = ChannelSpec("loop", LoopConfig, LoopAdapter)
    section: Any = LoopConfig()
    assert spec.account_configs(section) == [("default", section)]
