"""The ``slack`` channel's registry entry (D38, D94): its config model and adapter.

Loaded while the config is validated, so it imports only ``core.api.channels`` (no SDK).
Slack addresses a group by its channel id, so announce targets are ``channel:<id>`` (R3.6).
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, SecretStr, field_validator

from core.api.channels import (
    AccountConfig,
    ChannelCommon,
    ChannelSpec,
    check_url,
    iter_accounts,
    normalize_accounts,
)


class SlackAccountConfig(AccountConfig):
    """One Slack app (socket mode needs ``appToken``, HTTP mode ``signingSecret``)."""

    CREDENTIAL: ClassVar[str] = "bot_token"

    bot_token: SecretStr | None = None
    app_token: SecretStr | None = None
    signing_secret: SecretStr | None = None
    mode: Literal["socket", "http"] = "socket"
    api_base_url: str | None = None
    events_path: str = "/slack/events"

    _urls = field_validator("api_base_url")(check_url)

    @field_validator("events_path")
    @classmethod
    def _leading_slash(cls, value: str) -> str:
        if not value.startswith("/"):
            raise ValueError("must start with '/'")
        return value


class SlackConfig(ChannelCommon, SlackAccountConfig):  # type: ignore[misc]
    """``channels.slack``."""

    accounts: dict[str, SlackAccountConfig] = Field(default_factory=dict)

    _accounts = field_validator("accounts", mode="before")(normalize_accounts)

    def iter_accounts(self) -> list[tuple[str, SlackAccountConfig]]:
        """Every account to run, the top-level one as ``"default"``."""
        return iter_accounts(self, SlackAccountConfig, self.accounts)

    def account_ids(self) -> list[str]:
        return [account_id for account_id, _ in self.iter_accounts()]


SPEC = ChannelSpec(
    "slack",
    SlackConfig,
    "adapters.slack.adapter:SlackAdapter",
    order=3,
    env=(
        ("SLACK_BOT_TOKEN", "bot_token"),
        ("SLACK_APP_TOKEN", "app_token"),
        ("SLACK_SIGNING_SECRET", "signing_secret"),
    ),
    group_target="channel",
)
