"""`slack_rt`: a runtime with one Slack adapter (Socket Mode) on FakeSlack, for every test that
needs one (registered suite-wide from tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import pytest

from core.runtime import Runtime
from tests.conftest import RuntimeFactory, deep_merge
from tests.fakes.slack import FakeSlack

if TYPE_CHECKING:
    from adapters.slack.adapter import SlackAdapter

OWNER = "U0OWNER01"
SlackRuntime = Callable[..., Awaitable[tuple[Runtime, "SlackAdapter"]]]


@pytest.fixture
async def slack_rt(fake_slack: FakeSlack, make_runtime: RuntimeFactory) -> SlackRuntime:
    """`await slack_rt({...})`: a runtime with one Slack adapter on the fake (stopped first)."""
    # Imported here: this module is loaded by every test run, slack-bolt only by those using it.
    from adapters.slack.adapter import SlackAdapter, build

    async def factory(extra: dict[str, Any] | None = None) -> tuple[Runtime, SlackAdapter]:
        base = {
            "channels": {
                "slack": {
                    "botToken": fake_slack.bot_token,
                    "appToken": fake_slack.app_token,
                    "apiBaseUrl": fake_slack.base_url,
                    "owners": [OWNER],
                    "dmPolicy": "open",  # a non-owner may DM (D11)
                    "groupPolicy": "open",  # group pairing (D62) has its own tests
                    "streaming": "off",
                }
            }
        }  # previews have their own tests
        rt = await make_runtime(deep_merge(base, extra or {}))
        assert rt.config.channels.slack is not None
        [adapter] = build(rt.config.channels.slack, rt)
        assert isinstance(adapter, SlackAdapter)
        await rt.add_adapter(adapter)
        assert adapter.status().state == "connected"
        return rt, adapter

    return factory
