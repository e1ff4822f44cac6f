"""Schema behaviour: secrets, channel owners, accounts and channel URLs."""

from __future__ import annotations

import pytest
from pydantic import SecretStr, ValidationError

from adapters.telegram.spec import TelegramAccountConfig
from core.config import CrosstalkConfig, secret_value

# --- secrets and channels ------------------------------------------------------------------


def test_secrets_are_secret_str_and_hidden_from_repr() -> None:
    config = CrosstalkConfig.model_validate(
        {
            "gateway": {"auth": {"token": "gw-secret"}},
            "models": {"providers": {"p": {"apiKey": "sk-secret"}}},
            "channels": {"slack": {"botToken": "xoxb", "appToken": "xapp", "signingSecret": "ss"}},
        },
    )
    token = config.gateway.auth.token
    assert isinstance(token, SecretStr)
    assert token.get_secret_value() == "gw-secret"
    assert secret_value(config.models.providers["p"].api_key) == "sk-secret"
    assert secret_value(None) is None
    assert "gw-secret" not in repr(config)
    assert "sk-secret" not in repr(config)
    assert "xoxb" not in str(config)


def test_owner_ids_accept_numbers() -> None:
    config = CrosstalkConfig.model_validate(
        {"channels": {"discord": {"owners": [1234567890123, "42"]}}}
    )
    discord = config.channels.discord
    assert discord is not None
    assert discord.owners == ["1234567890123", "42"]
    assert discord.is_owner("42")
    assert not discord.is_owner("43")
    assert config.channels.webchat.is_owner("anyone")  # default owners ["*"]


def test_iter_accounts_default_first_then_extra() -> None:
    config = CrosstalkConfig.model_validate(
        {
            "channels": {
                "telegram": {
                    "botToken": "main-token",
                    "apiBaseUrl": "http://127.0.0.1:8081/",
                    "owners": ["1"],
                    "accounts": {"Work Bot": {"botToken": "work-token", "mode": "webhook"}},
                },
            },
        },
    )
    telegram = config.channels.telegram
    assert telegram is not None
    accounts = telegram.iter_accounts()
    assert [account_id for account_id, _ in accounts] == ["default", "work-bot"]
    assert telegram.account_ids() == ["default", "work-bot"]
    default = accounts[0][1]
    assert isinstance(default, TelegramAccountConfig)
    assert secret_value(default.bot_token) == "main-token"
    assert default.api_base_url == "http://127.0.0.1:8081"
    work = accounts[1][1]
    assert secret_value(work.bot_token) == "work-token"
    assert work.mode == "webhook"
    assert work.api_base_url is None  # extra accounts do not inherit


def test_iter_accounts_without_top_level_credentials() -> None:
    only_extra = CrosstalkConfig.model_validate(
        {"channels": {"discord": {"accounts": {"ops": {"token": "t"}}}}},
    ).channels.discord
    assert only_extra is not None
    assert only_extra.account_ids() == ["ops"]
    bare = CrosstalkConfig.model_validate({"channels": {"slack": {}}}).channels.slack
    assert bare is not None
    assert bare.account_ids() == ["default"]


def test_account_id_default_is_reserved() -> None:
    with pytest.raises(ValidationError, match="reserved"):
        CrosstalkConfig.model_validate({"channels": {"slack": {"accounts": {"Default": {}}}}})


def test_channel_urls_are_checked() -> None:
    with pytest.raises(ValidationError, match="URL"):
        CrosstalkConfig.model_validate({"channels": {"discord": {"gatewayUrl": "example.com"}}})
    with pytest.raises(ValidationError, match="start with '/'"):
        CrosstalkConfig.model_validate({"channels": {"slack": {"eventsPath": "events"}}})
