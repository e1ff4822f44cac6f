"""FakeSlack driven by the real slack-bolt 1.30 AsyncApp (Socket Mode, signed HTTP events)."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp, AsyncSay
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from tests.fakes.slack import FakeSlack


def _app(fake: FakeSlack, *, signing_secret: str | None = None) -> AsyncApp:
    client = AsyncWebClient(
        token=fake.bot_token, base_url=f"{fake.base_url}/api/", timeout=5, retry_handlers=[]
    )
    app = AsyncApp(client=client, signing_secret=signing_secret or fake.signing_secret)

    @app.event("message")
    async def on_message(event: dict[str, Any], say: AsyncSay) -> None:
        await say(text=f"echo: {event['text']}", thread_ts=event.get("thread_ts"))

    @app.event("app_mention")
    async def on_mention(event: dict[str, Any], say: AsyncSay) -> None:
        await say(text="mentioned", thread_ts=event["ts"])

    return app


async def test_socket_mode_round_trip(fake_slack: FakeSlack) -> None:
    handler = AsyncSocketModeHandler(_app(fake_slack), app_token=fake_slack.app_token)
    await handler.connect_async()  # type: ignore[no-untyped-call]
    try:
        [opened] = fake_slack.calls_for("apps.connections.open")
        assert opened.token == fake_slack.app_token
        await fake_slack.wait_for("socket.connect")
        envelope_id = await fake_slack.push_event(
            fake_slack.message_event("D0DM", "hi", thread_ts="123.000001")
        )
        [ack] = await fake_slack.wait_for("ack")
        assert ack.params["envelope_id"] == envelope_id
        [post] = await fake_slack.wait_for("chat.postMessage")
        assert post.params["channel"] == "D0DM"
        assert post.params["text"] == "echo: hi"
        assert post.params["thread_ts"] == "123.000001"
        assert post.token == fake_slack.bot_token
        # the app's own message is ignored by Bolt (IgnoringSelfEvents)
        own = fake_slack.message_event("D0DM", "me", user=fake_slack.bot_user_id)
        await fake_slack.push_event(own)
        await fake_slack.wait_for("ack", 2)
        await fake_slack.push_event(fake_slack.app_mention("C0CHAN", "hello"))
        posts = await fake_slack.wait_for("chat.postMessage", 2)
        assert [p.params["text"] for p in posts] == ["echo: hi", "mentioned"]
        # a "disconnect" request makes the client reconnect via apps.connections.open
        await fake_slack.disconnect()
        await fake_slack.wait_for("socket.connect", 2)
        assert len(fake_slack.calls_for("apps.connections.open")) == 2
    finally:  # client first, then (fixture) the fake
        await handler.close_async()  # type: ignore[no-untyped-call]


async def test_signed_http_events(fake_slack: FakeSlack) -> None:
    app = _app(fake_slack)
    runner = web.AppRunner(app.web_app(path="/slack/events"), shutdown_timeout=1)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    url = f"http://127.0.0.1:{runner.addresses[0][1]}/slack/events"
    try:
        status, body = await fake_slack.post_event(
            url, {"type": "url_verification", "challenge": "c-123"}
        )
        assert status == 200 and "c-123" in body
        status, _ = await fake_slack.post_event(
            url, fake_slack.message_event("D0", "x"), "wrong-secret"
        )
        assert status == 401
        status, _ = await fake_slack.post_event(url, fake_slack.message_event("D0", "hi"))
        assert status == 200
        [post] = await fake_slack.wait_for("chat.postMessage")
        assert post.params["text"] == "echo: hi"
        assert fake_slack.calls_for("auth.test")
    finally:
        await runner.cleanup()


async def test_api_errors_surface(fake_slack: FakeSlack) -> None:
    client = AsyncWebClient(
        token=fake_slack.bot_token, base_url=f"{fake_slack.base_url}/api/", retry_handlers=[]
    )
    fake_slack.fail_next("chat.postMessage", 429, retry_after=7)
    with pytest.raises(SlackApiError) as info:
        await client.chat_postMessage(channel="C1", text="x")
    assert info.value.response.status_code == 429
    assert info.value.response.headers["Retry-After"] == "7"
    assert info.value.response["error"] == "ratelimited"
    fake_slack.fail_next("chat.postMessage", 200, {"error": "channel_not_found"})
    with pytest.raises(SlackApiError, match="channel_not_found"):
        await client.chat_postMessage(channel="C1", text="x")
    ok = await client.chat_postMessage(channel="C1", text="x")
    assert ok["ok"] and ok["message"]["text"] == "x"
    bad = AsyncWebClient(
        token="xoxb-wrong", base_url=f"{fake_slack.base_url}/api/", retry_handlers=[]
    )
    with pytest.raises(SlackApiError, match="invalid_auth"):
        await bad.auth_test()
