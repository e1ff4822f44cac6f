"""Schema behaviour: defaults, aliases, strictness and send-policy normalisation."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from core.config import CrosstalkConfig, SendPolicyMatch, secret_value


def _locs(exc: pytest.ExceptionInfo[ValidationError]) -> list[tuple[Any, ...]]:
    return [tuple(e["loc"]) for e in exc.value.errors()]


# --- defaults ------------------------------------------------------------------------------


def test_gateway_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # away from the checkout: after `./scripts/run` its `.crosstalk` is the state dir (D130)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CROSSTALK_STATE_DIR", raising=False)
    gateway = CrosstalkConfig().gateway
    assert gateway.port == 18789
    assert gateway.bind == "127.0.0.1"
    assert gateway.auth.mode == "token"
    assert gateway.auth.token is None
    assert gateway.auth.password is None
    assert gateway.state_dir == os.path.expanduser("~/.crosstalk")
    assert not gateway.state_dir.startswith("~")
    assert gateway.database.url is None
    assert gateway.max_body_bytes == 2_097_152


def test_agents_defaults() -> None:
    agents = CrosstalkConfig().agents
    assert agents.list == []
    defaults = agents.defaults
    assert defaults.model is None
    assert defaults.system_prompt is None
    assert defaults.timeout_seconds == 600
    assert defaults.sandbox.mode == "off"
    assert defaults.sandbox.session_tools_visibility == "spawned"
    assert defaults.subagents.model is None
    assert defaults.subagents.archive_after_minutes == 60
    assert defaults.subagents.max_concurrent == 8


def test_session_tools_and_models_defaults() -> None:
    config = CrosstalkConfig()
    assert config.models.providers == {}
    session = config.session
    assert session.scope == "per-sender"
    assert session.main_key == "main"
    assert session.dm_scope == "main"
    assert session.identity_links == {}
    assert session.send_policy is None
    assert session.agent_to_agent.max_ping_pong_turns == 5
    tools = config.tools
    assert tools.profile is None
    assert tools.allow is None
    assert tools.deny == []
    assert tools.agent_to_agent.enabled is False
    assert tools.agent_to_agent.allow == []
    assert tools.subagents.tools.allow is None
    assert tools.subagents.tools.deny == []
    assert tools.sessions.send_rate_per_minute == 6
    assert tools.sessions.hop_budget == 8


def test_channel_defaults() -> None:
    channels = CrosstalkConfig().channels
    assert channels.webchat.enabled is True
    assert channels.webchat.owners == ["*"]
    assert channels.telegram is None
    assert channels.discord is None
    assert channels.slack is None
    assert channels.enabled_channels() == ["webchat"]

    config = CrosstalkConfig.model_validate(
        {"channels": {"telegram": {}, "discord": {}, "slack": {"enabled": False}}},
    )
    telegram = config.channels.telegram
    assert telegram is not None
    assert telegram.enabled is True
    assert telegram.owners == []
    assert telegram.groups.require_mention is True
    assert telegram.accounts == {}
    assert telegram.mode == "polling"
    assert telegram.api_base_url is None
    assert telegram.webhook_listen == "127.0.0.1"
    slack = config.channels.slack
    assert slack is not None
    assert slack.mode == "socket"
    assert slack.events_path == "/slack/events"
    assert config.channels.enabled_channels() == ["webchat", "telegram", "discord"]


# --- aliases -------------------------------------------------------------------------------


def test_camel_case_aliases_and_snake_case_names_both_validate() -> None:
    by_alias = CrosstalkConfig.model_validate(
        {"gateway": {"stateDir": "/srv/ct", "maxBodyBytes": 10}},
    )
    by_name = CrosstalkConfig.model_validate(
        {"gateway": {"state_dir": "/srv/ct", "max_body_bytes": 10}},
    )
    assert by_alias.gateway.state_dir == by_name.gateway.state_dir == "/srv/ct"
    assert by_alias.gateway.max_body_bytes == 10


def test_alias_round_trip() -> None:
    raw = {
        "gateway": {"port": 9000, "auth": {"token": "t0k"}, "stateDir": "/tmp/x"},
        "models": {
            "providers": {
                "openai": {
                    "baseUrl": "https://api.example.com/v1",
                    "models": [
                        {"id": "gpt-x", "contextWindow": 1000, "cost": {"input": 1.5, "output": 2}}
                    ],
                },
            },
        },
        "agents": {
            "defaults": {"model": {"primary": "openai/gpt-x", "fallbacks": ["openai/gpt-y"]}},
            "list": [{"id": "main", "default": True, "subagents": {"allowAgents": ["*"]}}],
        },
        "session": {
            "dmScope": "per-channel-peer",
            "identityLinks": {"alice": ["telegram:1", "discord:2"]},
            "sendPolicy": {
                "default": "deny",
                "rules": [{"action": "allow", "match": {"chatType": "direct"}}],
            },
        },
        "tools": {"agentToAgent": {"enabled": True}, "sessions": {"hopBudget": 3}},
    }
    config = CrosstalkConfig.model_validate(raw)
    dumped = config.model_dump(by_alias=True, mode="json")
    assert dumped["session"]["identityLinks"] == {"alice": ["telegram:1", "discord:2"]}
    assert dumped["session"]["sendPolicy"]["rules"][0]["match"]["chatType"] == "direct"
    assert dumped["models"]["providers"]["openai"]["models"][0]["contextWindow"] == 1000
    assert dumped["agents"]["list"][0]["subagents"]["allowAgents"] == ["*"]
    dumped["gateway"]["auth"]["token"] = "t0k"  # SecretStr dumps masked in json mode
    again = CrosstalkConfig.model_validate(dumped)
    assert again == config


# --- strictness ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "loc"),
    [
        ({"gateway": {"prot": 1}}, ("gateway", "prot")),
        ({"bogus": {}}, ("bogus",)),
        ({"channels": {"telegram": {"botTokn": "x"}}}, ("channels", "telegram", "botTokn")),
        (
            {"session": {"sendPolicy": {"rules": [{"action": "deny", "match": {"room": "x"}}]}}},
            ("session", "sendPolicy", "rules", 0, "match", "room"),
        ),
        ({"tools": {"sessions": {"extra": 1}}}, ("tools", "sessions", "extra")),
    ],
)
def test_unknown_keys_are_rejected(raw: dict[str, Any], loc: tuple[Any, ...]) -> None:
    with pytest.raises(ValidationError) as exc:
        CrosstalkConfig.model_validate(raw)
    assert loc in _locs(exc)
    assert exc.value.errors()[0]["type"] == "extra_forbidden"


@pytest.mark.parametrize(
    ("raw", "loc"),
    [
        ({"gateway": {"port": 0}}, ("gateway", "port")),
        ({"gateway": {"port": 70000}}, ("gateway", "port")),
        ({"gateway": {"port": "abc"}}, ("gateway", "port")),
        ({"session": {"scope": "everyone"}}, ("session", "scope")),
        (
            {"session": {"agentToAgent": {"maxPingPongTurns": 6}}},
            ("session", "agentToAgent", "maxPingPongTurns"),
        ),
        (
            {"session": {"sendPolicy": {"rules": [{"action": "block"}]}}},
            ("session", "sendPolicy", "rules", 0, "action"),
        ),
        (
            {
                "session": {
                    "sendPolicy": {"rules": [{"action": "deny", "match": {"chatType": "room"}}]}
                }
            },
            ("session", "sendPolicy", "rules", 0, "match", "chatType"),
        ),
        (
            {"agents": {"defaults": {"subagents": {"archiveAfterMinutes": 0}}}},
            ("agents", "defaults", "subagents", "archiveAfterMinutes"),
        ),
        (
            {"agents": {"defaults": {"sandbox": {"mode": "some"}}}},
            ("agents", "defaults", "sandbox", "mode"),
        ),
        ({"tools": {"profile": "everything"}}, ("tools", "profile")),
        ({"tools": {"sessions": {"hopBudget": 0}}}, ("tools", "sessions", "hopBudget")),
        (
            {"tools": {"sessions": {"sendRatePerMinute": -1}}},
            ("tools", "sessions", "sendRatePerMinute"),
        ),
        ({"channels": {"slack": {"mode": "rtm"}}}, ("channels", "slack", "mode")),
        ({"channels": {"telegram": {"webhookPort": 0}}}, ("channels", "telegram", "webhookPort")),
    ],
)
def test_wrong_values_are_rejected_with_their_path(
    raw: dict[str, Any],
    loc: tuple[Any, ...],
) -> None:
    with pytest.raises(ValidationError) as exc:
        CrosstalkConfig.model_validate(raw)
    assert loc in _locs(exc)


def test_send_policy_requires_action() -> None:
    with pytest.raises(ValidationError) as exc:
        CrosstalkConfig.model_validate({"session": {"sendPolicy": {"rules": [{"match": {}}]}}})
    assert ("session", "sendPolicy", "rules", 0, "action") in _locs(exc)


def test_password_mode_needs_password() -> None:
    with pytest.raises(ValidationError, match="password is required"):
        CrosstalkConfig.model_validate({"gateway": {"auth": {"mode": "password"}}})
    config = CrosstalkConfig.model_validate(
        {"gateway": {"auth": {"mode": "password", "password": "pw"}}},
    )
    assert secret_value(config.gateway.auth.password) == "pw"


def test_assignment_is_validated() -> None:
    config = CrosstalkConfig()
    with pytest.raises(ValidationError):
        config.gateway.port = 0


# --- send policy ---------------------------------------------------------------------------


def test_legacy_provider_is_migrated_to_channel() -> None:
    config = CrosstalkConfig.model_validate(
        {
            "session": {
                "sendPolicy": {"rules": [{"action": "deny", "match": {"provider": " Discord "}}]}
            }
        },
    )
    policy = config.session.send_policy
    assert policy is not None
    match = policy.rules[0].match
    assert match is not None
    assert match.channel == "discord"
    assert "provider" not in match.model_dump()


def test_legacy_provider_conflicting_with_channel_is_an_error() -> None:
    with pytest.raises(ValidationError, match="disagree"):
        SendPolicyMatch.model_validate({"provider": "slack", "channel": "discord"})
    same = SendPolicyMatch.model_validate({"provider": "slack", "channel": "slack"})
    assert same.channel == "slack"


def test_send_policy_match_normalises_and_blank_means_unset() -> None:
    match = SendPolicyMatch.model_validate({"channel": "  ", "keyPrefix": " Agent:Main: "})
    assert match.channel is None
    assert match.key_prefix == "agent:main:"
    rule_without_match = CrosstalkConfig.model_validate(
        {"session": {"sendPolicy": {"rules": [{"action": "deny"}]}}},
    ).session.send_policy
    assert rule_without_match is not None
    assert rule_without_match.rules[0].match is None
    assert rule_without_match.default is None
