"""Slack adapter: Events API mode on a host aiohttp app, start-up errors, backoff, send errors."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from adapters.slack.adapter import SlackAdapter
from adapters.slack.spec import SlackAccountConfig
from core.model.delivery_context import DeliveryContext
from core.model.errors import ChannelUnavailable, RateLimited, TargetForbidden, TargetNotFound
from tests.adapters.inbox import Inbox
from tests.adapters.slack.http_host import serve
from tests.fakes.slack import FakeSlack


def account(fake: FakeSlack, **over: Any) -> SlackAccountConfig:
    raw = {
        "botToken": fake.bot_token,
        "appToken": fake.app_token,
        "signingSecret": fake.signing_secret,
        "apiBaseUrl": fake.base_url,
        **over,
    }
    return SlackAccountConfig.model_validate(raw)


@pytest.fixture
async def adapters() -> AsyncIterator[list[SlackAdapter]]:
    """Adapters registered here are stopped before the fake goes away."""
    made: list[SlackAdapter] = []
    yield made
    for adapter in made:
        await adapter.stop()


async def test_http_events_mode(fake_slack: FakeSlack, adapters: list[SlackAdapter]) -> None:
    adapter = SlackAdapter(account(fake_slack, mode="http", eventsPath="/hooks/slack"))
    adapters.append(adapter)
    runner, base = await serve(adapter)
    url = f"{base}/hooks/slack"
    try:
        status, _ = await fake_slack.post_event(url, fake_slack.message_event("D0", "early"))
        assert status == 503  # not started yet: Slack will redeliver
        inbox = Inbox()
        await adapter.start(inbox)
        assert adapter.status().state == "connected"
        assert not fake_slack.calls_for("apps.connections.open")
        status, body = await fake_slack.post_event(
            url, {"type": "url_verification", "challenge": "c-1"}
        )
        assert status == 200 and "c-1" in body
        status, _ = await fake_slack.post_event(url, fake_slack.message_event("D0", "x"), "bad")
        assert status == 401
        ts = fake_slack.next_ts()
        status, _ = await fake_slack.post_event(
            url, fake_slack.message_event("C0PUB", "<@U0FAKEBOT> yo", channel_type="channel", ts=ts)
        )
        assert status == 200
        await fake_slack.post_event(url, fake_slack.app_mention("C0PUB", "yo", ts=ts))
        await fake_slack.post_event(url, fake_slack.message_event("D0IM", "dm", user="U0PEER"))
        first, second = await inbox.wait(2)
        assert first.chat_type == "channel" and first.chat_id == "C0PUB" and first.mentioned
        assert first.reply_to.to == "channel:C0PUB" and first.message_id == ts
        assert second.chat_type == "direct" and second.chat_id == "U0PEER"
        assert second.reply_to.to == "channel:D0IM" and not second.mentioned
        assert len(inbox.messages) == 2
        receipt = await adapter.send_text(
            DeliveryContext(channel="slack", to="channel:C0PUB", thread_id=ts), "hi"
        )
        [post] = await fake_slack.wait_for("chat.postMessage")
        assert post.params["thread_ts"] == ts and receipt.message_id
    finally:
        await adapter.stop()
        await runner.cleanup()


@pytest.mark.parametrize(
    ("over", "needle"),
    [
        ({"botToken": "xoxb-wrong"}, "botToken"),
        ({"appToken": "xapp-wrong"}, "appToken"),
        ({"botToken": None}, "botToken is not configured"),
        ({"appToken": None}, "appToken is not configured"),
    ],
)
async def test_bad_token_at_start(fake_slack: FakeSlack, over: dict[str, Any], needle: str) -> None:
    adapter = SlackAdapter(account(fake_slack, **over), "work")
    with pytest.raises(ChannelUnavailable, match="slack account work") as info:
        await adapter.start(Inbox())
    assert needle in str(info.value)
    assert adapter.status().state in ("failed", "stopped")
    await adapter.stop()


async def test_transient_failure_retries_with_backoff(
    fake_slack: FakeSlack, adapters: list[SlackAdapter]
) -> None:
    fake_slack.fail_next("auth.test", 500, times=2)
    adapter = SlackAdapter(account(fake_slack), retry_initial=0.01, retry_max=0.05)
    adapters.append(adapter)
    inbox = Inbox()
    await adapter.start(inbox)
    assert adapter.status().state == "retrying"
    assert "500" in (adapter.status().detail or "")
    await fake_slack.push_event(fake_slack.message_event("D0", "after retry"))  # waits for ws
    [msg] = await inbox.wait()
    assert msg.text == "after retry"
    assert adapter.status().state == "connected"  # set before any event can be read
    assert [c.status for c in fake_slack.calls_for("auth.test")][:3] == [500, 500, 200]


async def test_unreachable_api_does_not_block_start(adapters: list[SlackAdapter]) -> None:
    cfg = SlackAccountConfig.model_validate(
        {"botToken": "xoxb-1", "appToken": "xapp-1", "apiBaseUrl": "http://127.0.0.1:9"}
    )
    adapter = SlackAdapter(cfg, retry_initial=30)
    adapters.append(adapter)
    await asyncio.wait_for(adapter.start(Inbox()), 5)
    status = adapter.status()
    assert status.state == "retrying" and status.detail


async def test_socket_reconnects_on_disconnect(
    fake_slack: FakeSlack, adapters: list[SlackAdapter]
) -> None:
    adapter = SlackAdapter(account(fake_slack))
    adapters.append(adapter)
    inbox = Inbox()
    await adapter.start(inbox)
    await fake_slack.disconnect()
    await fake_slack.wait_for("socket.connect", 2)
    await fake_slack.push_event(fake_slack.message_event("D0", "still here"))
    await inbox.wait()
    assert adapter.status().state == "connected"


async def test_send_errors_are_typed(fake_slack: FakeSlack, adapters: list[SlackAdapter]) -> None:
    adapter = SlackAdapter(account(fake_slack))
    target = DeliveryContext(channel="slack", to="channel:C0X")
    with pytest.raises(ChannelUnavailable):
        await adapter.send_text(target, "not started")
    adapters.append(adapter)
    await adapter.start(Inbox())
    fake_slack.fail_next("chat.postMessage", 429, retry_after=7)
    with pytest.raises(RateLimited) as limited:
        await adapter.send_text(target, "x")
    assert limited.value.retry_after == 7
    for error, exc_type in [
        ("channel_not_found", TargetNotFound),
        ("not_in_channel", TargetForbidden),
        ("restricted_action", TargetForbidden),
    ]:
        fake_slack.fail_next("chat.postMessage", 200, {"error": error})
        with pytest.raises(exc_type, match=error):
            await adapter.send_text(target, "x")
    fake_slack.fail_next("chat.postMessage", 403)
    with pytest.raises(TargetForbidden):
        await adapter.send_text(target, "x")
    receipt = await adapter.send_text(DeliveryContext(channel="slack", to="user:U0PEER"), "dm")
    assert fake_slack.calls_for("chat.postMessage")[-1].params["channel"] == "U0PEER"
    assert receipt.message_id
    await fake_slack.stop()  # the platform vanishes: a network error, not a crash
    with pytest.raises(ChannelUnavailable):
        await adapter.send_text(target, "x")
