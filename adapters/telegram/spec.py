"""The ``telegram`` channel's registry entry (D38, D94): its config model and adapter.

Loaded while the config is validated, so it imports only ``core.api.channels`` (no SDK).
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


class TelegramAccountConfig(AccountConfig):
    """One Telegram bot."""

    CREDENTIAL: ClassVar[str] = "bot_token"

    bot_token: SecretStr | None = None
    api_base_url: str | None = None
    """``None`` = the official Bot API; set it to point at a fake or a local Bot API server."""
    mode: Literal["polling", "webhook"] = "polling"
    webhook_url: str | None = None
    webhook_secret: SecretStr | None = None
    webhook_listen: str = "127.0.0.1"
    webhook_port: int | None = Field(default=None, ge=1, le=65535)

    _urls = field_validator("api_base_url", "webhook_url")(check_url)


class TelegramConfig(ChannelCommon, TelegramAccountConfig):  # type: ignore[misc]
    """``channels.telegram``."""

    accounts: dict[str, TelegramAccountConfig] = Field(default_factory=dict)

    _accounts = field_validator("accounts", mode="before")(normalize_accounts)

    def iter_accounts(self) -> list[tuple[str, TelegramAccountConfig]]:
        """Every account to run, the top-level one as ``"default"``."""
        return iter_accounts(self, TelegramAccountConfig, self.accounts)

    def account_ids(self) -> list[str]:
        return [account_id for account_id, _ in self.iter_accounts()]


SPEC = ChannelSpec(
    "telegram",
    TelegramConfig,
    "adapters.telegram.adapter:TelegramAdapter",
    order=1,
    env=(("TELEGRAM_BOT_TOKEN", "bot_token"),),
)
