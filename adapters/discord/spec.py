"""The ``discord`` channel's registry entry (D38, D94): its config model and adapter.

Loaded while the config is validated, so it imports only ``core.api.channels`` (no SDK).
Discord addresses a group by its channel id, so announce targets are ``channel:<id>`` (R3.6).
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field, SecretStr, field_validator

from core.api.channels import (
    AccountConfig,
    ChannelCommon,
    ChannelSpec,
    check_url,
    iter_accounts,
    normalize_accounts,
)


class DiscordAccountConfig(AccountConfig):
    """One Discord bot."""

    CREDENTIAL: ClassVar[str] = "token"

    token: SecretStr | None = None
    api_base_url: str | None = None
    gateway_url: str | None = None

    _urls = field_validator("api_base_url", "gateway_url")(check_url)


class DiscordConfig(ChannelCommon, DiscordAccountConfig):  # type: ignore[misc]
    """``channels.discord``."""

    accounts: dict[str, DiscordAccountConfig] = Field(default_factory=dict)

    _accounts = field_validator("accounts", mode="before")(normalize_accounts)

    def iter_accounts(self) -> list[tuple[str, DiscordAccountConfig]]:
        """Every account to run, the top-level one as ``"default"``."""
        return iter_accounts(self, DiscordAccountConfig, self.accounts)

    def account_ids(self) -> list[str]:
        return [account_id for account_id, _ in self.iter_accounts()]


SPEC = ChannelSpec(
    "discord",
    DiscordConfig,
    "adapters.discord.adapter:DiscordAdapter",
    order=2,
    env=(("DISCORD_BOT_TOKEN", "token"),),
    group_target="channel",
)
