"""`discord_rt`: a runtime with one Discord adapter on FakeDiscord, for every test that needs one
(registered suite-wide from tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import pytest

from core.runtime import Runtime
from tests.conftest import RuntimeFactory, deep_merge
from tests.fakes.discord import FakeDiscord

if TYPE_CHECKING:
    from adapters.discord.adapter import DiscordAdapter

OWNER = 800000000001  # FakeDiscord.user_message's default author ("alice")
DiscordRuntime = Callable[..., Awaitable[tuple[Runtime, "DiscordAdapter"]]]


async def add_discord(rt: Runtime) -> DiscordAdapter:
    """The Discord adapter built from `rt`'s config as every test builds it (no reconnects, a
    short wait for guilds), added to `rt`."""
    # Imported here: this module is loaded by every test run, discord.py only by those using it.
    from adapters.discord.adapter import DiscordAdapter, build

    assert rt.config.channels.discord is not None
    [adapter] = build(
        rt.config.channels.discord, rt, guild_ready_timeout=0.05, reconnect=False, start_timeout=5.0
    )
    assert isinstance(adapter, DiscordAdapter)
    await rt.add_adapter(adapter)
    return adapter


@pytest.fixture
async def discord_rt(fake_discord: FakeDiscord, make_runtime: RuntimeFactory) -> DiscordRuntime:
    """`await discord_rt({...})`: a runtime with one Discord adapter on the fake."""

    async def factory(extra: dict[str, Any] | None = None) -> tuple[Runtime, DiscordAdapter]:
        base = {
            "channels": {
                "discord": {
                    "token": fake_discord.token,  # previews: own tests
                    "owners": [str(OWNER)],
                    "streaming": "off",
                    "groupPolicy": "open",  # group pairing (D62) has its own tests
                }
            },
            "session": {"dmScope": "per-channel-peer"},
        }  # DM keys name the peer
        rt = await make_runtime(deep_merge(base, extra or {}))
        adapter = await add_discord(rt)
        assert adapter.status().state == "connected"
        return rt, adapter

    return factory
