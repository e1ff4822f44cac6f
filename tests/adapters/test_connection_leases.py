"""Discord and Slack Socket Mode behind the connection lease (D36), two adapters of one bot as
two processes would run them (one store, two lease holders): one receives, the other is in
standby and still sends; when the holder stops, the other takes the connection over."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from adapters.discord.adapter import DiscordAdapter
from adapters.discord.spec import DiscordAccountConfig
from adapters.slack.adapter import SlackAdapter
from adapters.slack.spec import SlackAccountConfig
from adapters.telegram.adapter import build as build_telegram
from core.engine.cluster import Leases
from core.model.channel import ChannelAdapter
from core.model.delivery_context import DeliveryContext
from core.model.inbound import InboundMessage
from core.store import Store
from tests.conftest import RuntimeFactory
from tests.fakes.discord import FakeDiscord
from tests.fakes.slack import FakeSlack
from tests.fakes.telegram import FakeTelegram
from tests.polling import eventually

TTL_MS = 600  # renewed every 0.2 s


async def _sink(msg: InboundMessage) -> None:
    return None


@pytest.fixture
async def started() -> AsyncIterator[list[ChannelAdapter]]:
    adapters: list[ChannelAdapter] = []
    yield adapters
    for adapter in adapters:
        await adapter.stop()


async def _pair(
    store: Store, make: Callable[[], ChannelAdapter], started: list[ChannelAdapter]
) -> tuple[ChannelAdapter, ChannelAdapter]:
    a, b = make(), make()
    for adapter, holder in ((a, "A"), (b, "B")):
        adapter.connection_lease = Leases(store, holder, ttl_ms=TTL_MS)
        started.append(adapter)
        await adapter.start(_sink)
    return a, b


async def _state(adapter: ChannelAdapter, state: str) -> bool:
    return adapter.status().state == state


async def test_slack_socket_mode_one_receiver(
    store: Store, fake_slack: FakeSlack, started: list[ChannelAdapter]
) -> None:
    cfg = SlackAccountConfig.model_validate(
        {
            "botToken": fake_slack.bot_token,
            "appToken": fake_slack.app_token,
            "apiBaseUrl": fake_slack.base_url,
        }
    )
    a, b = await _pair(store, lambda: SlackAdapter(cfg), started)
    assert a.status().state == "connected"
    status = b.status()
    assert (status.state, status.detail, status.extra["holder"]) == ("standby", "held by A", "A")
    assert len(fake_slack.live_sockets()) == 1
    receipt = await b.send_text(DeliveryContext(channel="slack", to="channel:C0X"), "from B")
    assert receipt.message_id  # standby still sends
    await a.stop()
    await eventually(lambda: _state(b, "connected"), timeout=5)
    assert b.status().extra["holder"] == "B"
    await fake_slack.wait_until(lambda: len(fake_slack.live_sockets()) == 1)


async def test_discord_gateway_one_receiver(
    store: Store, fake_discord: FakeDiscord, started: list[ChannelAdapter]
) -> None:
    cfg = DiscordAccountConfig.model_validate({"token": fake_discord.token})
    opts: dict[str, Any] = {"guild_ready_timeout": 0.05, "reconnect": False}
    a, b = await _pair(store, lambda: DiscordAdapter(cfg, "default", **opts), started)
    assert a.status().state == "connected"
    assert b.status().state == "standby"
    assert len(fake_discord.calls_for("IDENTIFY")) == 1  # only A opened the gateway
    chan = DeliveryContext(channel="discord", to=f"channel:{fake_discord.CHANNEL_ID}")
    assert (await b.send_text(chan, "from B")).message_id  # standby sends over REST
    await a.stop()
    await eventually(lambda: _state(b, "connected"), timeout=5)
    assert len(fake_discord.calls_for("IDENTIFY")) == 2


async def test_sqlite_restart_after_a_crash_receives_at_once(
    make_runtime: RuntimeFactory, fake_telegram: FakeTelegram
) -> None:
    """One process owns a SQLite database: a lease left by a crashed predecessor (it could
    not release it) must not keep the restarted gateway in standby."""
    rt = await make_runtime(
        {
            "channels": {
                "telegram": {"botToken": fake_telegram.token, "apiBaseUrl": fake_telegram.base_url}
            }
        }
    )
    dead = Leases(rt.store, "crashed-process", ttl_ms=3_600_000)
    assert await dead.acquire("channel:telegram:default")
    section = rt.config.channels.telegram
    assert section is not None
    [adapter] = build_telegram(section, rt)
    await rt.add_adapter(adapter)
    status = adapter.status()
    assert (status.state, status.extra["holder"]) == ("connected", rt.membership.identity.id)
    await fake_telegram.wait_for("getUpdates")
