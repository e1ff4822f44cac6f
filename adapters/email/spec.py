"""``channels.email``: its config model and registry entry (D77). Imports no mail library.

Email addresses are easy to forge, so ``dmPolicy`` defaults to ``allowlist`` here: a sender
who is neither an owner nor in ``allowFrom`` is refused without any reply (a pairing code
would go to whoever the forged address belongs to). Addresses compare case-insensitively.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr, field_validator

from core.api.channels import ChannelCommon, ChannelSpec, ConfigModel

Tls = Literal["tls", "starttls", "none"]
DmPolicy = Literal["pairing", "allowlist", "open", "disabled"]
_DEFAULT_PORTS = {
    "imap": {"tls": 993, "starttls": 143, "none": 143},
    "smtp": {"tls": 465, "starttls": 587, "none": 25},
}


class MailServerConfig(ConfigModel):
    """One server (``imap`` or ``smtp``)."""

    host: str
    port: int | None = Field(default=None, ge=1, le=65535)
    """Default by ``tls``: IMAP 993 / 143, SMTP 465 / 587 (25 without TLS)."""
    username: str
    password: SecretStr
    tls: Tls = "tls"
    """``tls``: TLS from the first byte (default); ``starttls``: upgraded before login;
    ``none``: plain text (loopback and tests only)."""
    ca_file: str | None = None
    """A CA bundle to trust instead of the system's (a private mail server)."""

    def port_for(self, kind: Literal["imap", "smtp"]) -> int:
        return self.port or _DEFAULT_PORTS[kind][self.tls]


def _address(value: str) -> str:
    return value.strip().lower()


class EmailConfig(ChannelCommon):
    """``channels.email``: one mailbox (``owners``/``allowFrom`` are email addresses)."""

    dm_policy: DmPolicy = "allowlist"
    imap: MailServerConfig
    smtp: MailServerConfig
    from_address: str = Field(alias="from")
    """The bot's address: the ``From`` of its replies (its own mail is never a turn)."""
    mailbox: str = "INBOX"
    poll_seconds: float = Field(default=60.0, gt=0)
    """How often to look for new mail without IDLE (none offered, or ``idle`` off); with
    IDLE, the longest one IDLE lasts before a fresh look."""
    idle: bool = True
    """Use IMAP IDLE where the server offers it (new mail arrives at once)."""

    @field_validator("owners", "allow_from")
    @classmethod
    def _lower(cls, value: list[str]) -> list[str]:
        return [_address(v) for v in value]

    @field_validator("from_address")
    @classmethod
    def _from(cls, value: str) -> str:
        if "@" not in value:
            raise ValueError(f"must be an email address (got {value!r})")
        return value.strip()


SPEC = ChannelSpec(
    "email", EmailConfig, "adapters.email.adapter:EmailAdapter", order=13, dm_threads=True
)  # each thread is its own session (D77)
