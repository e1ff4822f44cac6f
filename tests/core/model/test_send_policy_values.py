"""Send-policy values: rules and specs normalised, checked and frozen; `from_config` on the
config model and on raw dicts; the route (channel, chat type) a session key names."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from core.model.keys import route_of_key
from core.model.send_policy import SendPolicySpec, SendRule
from tests.core.model.send_policy_helpers import DISCORD_CHANNEL, DISCORD_GROUP, resolve

# --- value types and from_config -----------------------------------------------------------


def test_rule_values_are_normalised() -> None:
    rule = SendRule("DENY ", channel=" Discord ", chat_type=" Group ", key_prefix=" Cron: ")  # type: ignore[arg-type]
    assert rule == SendRule("deny", channel="discord", chat_type="group", key_prefix="cron:")
    blank = SendRule("allow", channel=" ", chat_type="", key_prefix="")  # type: ignore[arg-type]
    assert (blank.channel, blank.chat_type, blank.key_prefix) == (None, None, None)


@pytest.mark.parametrize(
    "kwargs",
    [{"action": "block"}, {"action": "allow", "chat_type": "room"}],
)
def test_invalid_rule_values_are_rejected(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        SendRule(**kwargs)


def test_invalid_default_is_rejected() -> None:
    with pytest.raises(ValueError):
        SendPolicySpec(default="maybe")  # type: ignore[arg-type]


def test_values_are_frozen() -> None:
    rule = SendRule("deny")
    with pytest.raises(AttributeError):
        rule.action = "allow"  # type: ignore[misc]


def test_from_config_duck_types_the_config_model() -> None:
    config = SimpleNamespace(
        default="deny",
        rules=[
            SimpleNamespace(
                action="deny",
                match=SimpleNamespace(channel="Discord", chat_type="group", key_prefix=None),
            ),
            SimpleNamespace(action="allow", match=None),
        ],
    )
    assert SendPolicySpec.from_config(config) == SendPolicySpec(
        default="deny",
        rules=(SendRule("deny", channel="discord", chat_type="group"), SendRule("allow")),
    )


def test_from_config_accepts_camel_case_dicts_and_legacy_provider() -> None:
    raw = {
        "default": "Allow",
        "rules": [
            {"action": "deny", "match": {"chatType": "dm", "keyPrefix": "Agent:Main:"}},
            {"action": "deny", "match": {"provider": "telegram"}},
            {"action": "deny", "match": {"provider": "Slack", "channel": "slack"}},
            {"match": {"channel": "discord"}},
        ],
    }
    assert SendPolicySpec.from_config(raw) == SendPolicySpec(
        default="allow",
        rules=(
            SendRule("deny", chat_type="direct", key_prefix="agent:main:"),
            SendRule("deny", channel="telegram"),
            SendRule("deny", channel="slack"),
            SendRule("allow", channel="discord"),
        ),
    )


def test_from_config_none_is_no_policy() -> None:
    spec_ = SendPolicySpec.from_config(None)
    assert spec_.is_empty
    assert resolve(spec_, session_key=DISCORD_GROUP).reason == "no policy configured"


@pytest.mark.parametrize(
    "raw",
    [
        {"rules": [{"action": "deny", "match": {"chattype": "group"}}]},
        {"rules": [{"action": "deny", "match": {"chatType": "room"}}]},
        {"rules": [{"action": "block"}]},
        {"default": "maybe"},
        {"rules": "deny"},
        {"rules": [{"action": "deny", "match": {"provider": "telegram", "channel": "slack"}}]},
    ],
)
def test_from_config_rejects_values_that_would_widen_or_confuse(raw: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        SendPolicySpec.from_config(raw)


def test_from_config_policy_resolves_like_the_spec_example() -> None:
    raw = {
        "rules": [{"match": {"channel": "discord", "chatType": "group"}, "action": "deny"}],
        "default": "allow",
    }
    policy = SendPolicySpec.from_config(raw)
    assert resolve(policy, session_key=DISCORD_GROUP).action == "deny"
    assert resolve(policy, session_key=DISCORD_CHANNEL).action == "allow"
    assert resolve(policy, session_key="agent:main:telegram:group:1").action == "allow"


# --- key derivation ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("agent:main:discord:group:dev", ("discord", "group")),
        ("agent:main:slack:channel:c123", ("slack", "channel")),
        ("agent:main:telegram:dm:alice", ("telegram", "direct")),
        ("agent:main:telegram:work:dm:alice", ("telegram", "direct")),
        ("discord:group:dev", ("discord", "group")),
        ("group:dev", (None, "group")),
        ("agent:main:dm:alice", (None, "direct")),
        ("agent:main:main", (None, None)),
        ("agent:main:subagent:0b6f", (None, None)),
        ("agent:main:discord:group", (None, None)),
        ("  AGENT:Main:Discord:Group:Dev ", ("discord", "group")),
        ("", (None, None)),
        (None, (None, None)),
    ],
)
def test_route_of_key(key: str | None, expected: tuple[str | None, str | None]) -> None:
    assert route_of_key(key) == expected
