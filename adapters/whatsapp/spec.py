"""The ``whatsapp`` channel's registry entry (D38, D77): its config model and adapter.

Loaded while the config is validated, so it imports only ``core.api.channels``. The section
holds the default account at top level and more under ``accounts`` (each its own phone number),
with D11's access fields inherited as on every platform.
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

CHANNEL = "whatsapp"
GRAPH_API = "https://graph.facebook.com/v23.0"
WEBHOOK_PATH = "/whatsapp/webhook"


class WhatsAppAccountConfig(AccountConfig):
    """One WhatsApp Business phone number on the Cloud API."""

    CREDENTIAL: ClassVar[str] = "access_token"

    phone_number_id: str | None = None
    """The Cloud API's id of the business phone number (not the number itself)."""
    access_token: SecretStr | None = None
    """A (system-user) access token with ``whatsapp_business_messaging``."""
    app_secret: SecretStr | None = None
    """The Meta app's secret: webhook POSTs are verified with it (``X-Hub-Signature-256``)."""
    verify_token: SecretStr | None = None
    """What Meta sends back when the webhook is registered (the GET verify challenge)."""
    api_base_url: str = GRAPH_API
    """The Graph API with its version; point it at a fake or a proxy in tests."""

    _urls = field_validator("api_base_url")(check_url)


class WhatsAppConfig(ChannelCommon, WhatsAppAccountConfig):  # type: ignore[misc]
    """``channels.whatsapp``."""

    accounts: dict[str, WhatsAppAccountConfig] = Field(default_factory=dict)

    _accounts = field_validator("accounts", mode="before")(normalize_accounts)

    def iter_accounts(self) -> list[tuple[str, WhatsAppAccountConfig]]:
        """Every account to run, the top-level one as ``"default"``."""
        return iter_accounts(self, WhatsAppAccountConfig, self.accounts)

    def account_ids(self) -> list[str]:
        return [account_id for account_id, _ in self.iter_accounts()]


SPEC = ChannelSpec(
    CHANNEL,
    WhatsAppConfig,
    "adapters.whatsapp.adapter:WhatsAppAdapter",
    order=10,
    prefer_session_lookup=True,  # the reference's WhatsApp plugin (R3.6)
)
