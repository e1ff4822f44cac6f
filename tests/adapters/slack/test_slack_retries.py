"""Slack Events API retries (``X-Slack-Retry-Num``) are one turn, also after a restart (D16).

Slack retries an event it got no 2xx for within 3 s, with the same ``event_id``; before D16
only an in-memory set remembered it, so a retry that arrived after a restart was answered
twice.
"""

from __future__ import annotations

from typing import Any

from adapters.slack.adapter import SlackAdapter, build
from core.runtime import Runtime
from tests.adapters.slack.http_host import serve
from tests.conftest import RuntimeFactory
from tests.fakes.slack import FakeSlack
from tests.polling import eventually, user_texts


async def test_http_retries_are_dropped_across_a_restart(
    fake_slack: FakeSlack, make_runtime: RuntimeFactory
) -> None:
    config = {
        "channels": {
            "slack": {
                "mode": "http",
                "eventsPath": "/hooks/slack",
                "botToken": fake_slack.bot_token,
                "signingSecret": fake_slack.signing_secret,
                "apiBaseUrl": fake_slack.base_url,
                "dmPolicy": "open",
                "streaming": "off",
            }
        }
    }
    payload = fake_slack.event_callback(fake_slack.message_event("D0DM0001", "just once"))

    async def start() -> tuple[Runtime, SlackAdapter, Any, str]:
        rt = await make_runtime(config)
        assert rt.config.channels.slack is not None
        [adapter] = build(rt.config.channels.slack, rt)
        assert isinstance(adapter, SlackAdapter)
        await rt.add_adapter(adapter)
        runner, base = await serve(adapter)
        return rt, adapter, runner, f"{base}/hooks/slack"

    rt, adapter, runner, url = await start()
    try:
        assert (await fake_slack.post_event(url, payload))[0] == 200
        await fake_slack.wait_for("chat.postMessage", 1)
        retry = {"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"}
        assert (await fake_slack.post_event(url, payload, headers=retry))[0] == 200

        async def one_dropped() -> bool:
            return rt.router.duplicates.count("slack", "default") == 1

        await eventually(one_dropped)
    finally:
        await adapter.stop()
        await runner.cleanup()
    await rt.stop()

    rt, adapter, runner, url = await start()  # a restarted gateway: nothing in memory
    try:
        retry = {"X-Slack-Retry-Num": "2", "X-Slack-Retry-Reason": "http_timeout"}
        assert (await fake_slack.post_event(url, payload, headers=retry))[0] == 200
        await fake_slack.post_event(url, fake_slack.message_event("D0DM0001", "next"))
        posts = await fake_slack.wait_for("chat.postMessage", 2)
        assert [p.params["text"] for p in posts] == ["echo: just once", "echo: next"]
        assert rt.router.duplicates.count("slack", "default") == 1
        # the stranger's DM is its own session, never the main one (D62)
        assert await user_texts(rt, "agent:main:slack:dm:u0user001") == ["just once", "next"]
    finally:
        await adapter.stop()
        await runner.cleanup()
