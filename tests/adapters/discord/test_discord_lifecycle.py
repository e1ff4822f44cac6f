"""Discord adapter connection handling: auth errors, backoff, overrides, typed send errors."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import discord.http
import pytest

from adapters.discord.adapter import DiscordAdapter
from adapters.discord.normalize import parse_to
from adapters.discord.spec import DiscordAccountConfig
from core.model.delivery_context import DeliveryContext
from core.model.errors import ChannelUnavailable, RateLimited, TargetForbidden, TargetNotFound
from core.model.inbound import InboundMessage
from tests.fakes.discord import FakeDiscord


async def _sink(msg: InboundMessage) -> None:
    return None


def _adapter(token: str | None, **options: object) -> DiscordAdapter:
    config = DiscordAccountConfig.model_validate({"token": token} if token else {})
    opts = {"guild_ready_timeout": 0.05, "reconnect": False, "start_timeout": 5.0, **options}
    return DiscordAdapter(config, "default", **opts)  # type: ignore[arg-type]


async def test_bad_token_is_a_clear_error(fake_discord: FakeDiscord) -> None:
    adapter = _adapter("not-the-token")
    with pytest.raises(ChannelUnavailable, match="discord account default: token rejected"):
        await adapter.start(_sink)
    assert adapter.status().state == "failed"
    assert len(fake_discord.calls_for("getCurrentUser")) == 1  # not retried
    await adapter.stop()  # safe after a failed start, and twice
    await adapter.stop()


async def test_token_rejected_by_gateway_4004(
    fake_discord: FakeDiscord, monkeypatch: pytest.MonkeyPatch
) -> None:
    """REST accepts the token but IDENTIFY does not (revoked meanwhile): fatal, not retried."""
    on_op = fake_discord._on_op

    async def revoked(conn: Any, payload: dict[str, Any]) -> None:
        if payload.get("op") == 2:
            payload["d"]["token"] = "revoked"
        await on_op(conn, payload)

    monkeypatch.setattr(fake_discord, "_on_op", revoked)
    adapter = _adapter(fake_discord.token, reconnect=True)  # production setting
    with pytest.raises(ChannelUnavailable, match=r"discord account default: .*\(4004\)"):
        await asyncio.wait_for(adapter.start(_sink), 5)
    assert adapter.status().state == "failed"
    assert len(fake_discord.calls_for("IDENTIFY")) == 1
    await adapter.stop()


async def test_missing_token(fake_discord: FakeDiscord) -> None:
    adapter = _adapter(None)
    with pytest.raises(ChannelUnavailable, match="discord account default: no token"):
        await adapter.start(_sink)
    assert not fake_discord.calls


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_unreachable_api_retries_with_backoff(
    fake_discord: FakeDiscord, monkeypatch: pytest.MonkeyPatch
) -> None:
    """start() returns while the API is down; the supervisor retries and then connects."""
    monkeypatch.setattr(discord.http.Route, "BASE", f"http://127.0.0.1:{_closed_port()}/api/v10")
    adapter = _adapter(fake_discord.token, start_timeout=0.3, retry_initial=0.05, retry_max=0.2)
    try:
        await asyncio.wait_for(adapter.start(_sink), 3)
        status = adapter.status()
        assert status.state == "retrying" and "retrying in" in (status.detail or "")
        with pytest.raises(ChannelUnavailable):
            await adapter.send_text(DeliveryContext(channel="discord", to="channel:1"), "x")
        monkeypatch.setattr(discord.http.Route, "BASE", fake_discord.api_base)
        await asyncio.wait_for(adapter.wait_until_connected(), 5)
        assert adapter.status().state == "connected"
    finally:
        await adapter.stop()
    assert adapter.status().state == "stopped"


async def test_config_overrides_and_typed_send_errors(
    fake_discord: FakeDiscord, monkeypatch: pytest.MonkeyPatch
) -> None:
    # break both globals: the adapter's apiBaseUrl/gatewayUrl settings must repair them
    monkeypatch.setattr(discord.http.Route, "BASE", "http://127.0.0.1:9/api/v10")
    config = DiscordAccountConfig.model_validate(
        {
            "token": fake_discord.token,
            "apiBaseUrl": fake_discord.base_url,
            "gatewayUrl": fake_discord.gateway_url,
        }
    )
    adapter = DiscordAdapter(config, "work", guild_ready_timeout=0.05, reconnect=False)
    try:
        await asyncio.wait_for(adapter.start(_sink), 5)
        assert adapter.status().state == "connected"
        assert discord.http.Route.BASE == fake_discord.api_base
        chan = DeliveryContext(
            channel="discord", to=f"channel:{fake_discord.CHANNEL_ID}", account_id="work"
        )
        receipt = await adapter.send_text(chan, "plain")
        assert receipt.message_id
        fake_discord.fail_next("createMessage", 429, retry_after=60)
        with pytest.raises(RateLimited) as info:
            await adapter.send_text(chan, "x")
        assert info.value.retry_after == 60
        fake_discord.fail_next("createMessage", 403)
        with pytest.raises(TargetForbidden):
            await adapter.send_text(chan, "x")
        fake_discord.fail_next("createMessage", 404)
        with pytest.raises(TargetNotFound):
            await adapter.send_text(chan, "x")
        with pytest.raises(TargetNotFound):
            await adapter.send_text(DeliveryContext(channel="discord", to="#general"), "x")
        threaded = DeliveryContext(
            channel="discord",
            to=f"channel:{fake_discord.CHANNEL_ID}",
            thread_id=str(fake_discord.THREAD_ID),
        )
        await adapter.send_text(threaded, "in thread")
        last = fake_discord.calls_for("createMessage")[-1]
        assert last.params["channel_id"] == str(fake_discord.THREAD_ID)
    finally:
        await adapter.stop()
    with pytest.raises(ChannelUnavailable):
        await adapter.send_text(chan, "after stop")


def test_parse_to() -> None:
    assert parse_to("channel:123") == ("channel", 123)
    assert parse_to("user:45") == ("user", 45)
    assert parse_to("678") == ("channel", 678)
    assert parse_to("discord:channel:9") == ("channel", 9)
    for bad in ("", "channel:", "chan:1", "channel:abc"):
        with pytest.raises(ValueError):
            parse_to(bad)
