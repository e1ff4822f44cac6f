"""The ``signal`` channel's registry entry (D38, D77): its config model and adapter.

Loaded while the config is validated, so it imports only ``core.api.channels``. An account is
one Signal number registered (or linked) in a signal-cli daemon started with ``--http``.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field, field_validator

from core.api.channels import (
    AccountConfig,
    ChannelCommon,
    ChannelSpec,
    check_url,
    iter_accounts,
    normalize_accounts,
)

CHANNEL = "signal"


class SignalAccountConfig(AccountConfig):
    """One Signal account in a signal-cli daemon."""

    CREDENTIAL: ClassVar[str] = "account"

    account: str | None = None
    """The account's number as signal-cli knows it (``+4915112345678``)."""
    http_url: str = "http://127.0.0.1:8080"
    """Where ``signal-cli daemon --http`` listens (its ``/api/v1/rpc`` and ``/api/v1/events``)."""

    _urls = field_validator("http_url")(check_url)

    def has_credentials(self) -> bool:
        return bool(self.account)


class SignalConfig(ChannelCommon, SignalAccountConfig):  # type: ignore[misc]
    """``channels.signal``."""

    accounts: dict[str, SignalAccountConfig] = Field(default_factory=dict)

    _accounts = field_validator("accounts", mode="before")(normalize_accounts)

    def iter_accounts(self) -> list[tuple[str, SignalAccountConfig]]:
        """Every account to run, the top-level one as ``"default"``."""
        return iter_accounts(self, SignalAccountConfig, self.accounts)

    def account_ids(self) -> list[str]:
        return [account_id for account_id, _ in self.iter_accounts()]


SPEC = ChannelSpec(CHANNEL, SignalConfig, "adapters.signal.adapter:SignalAdapter", order=11)
