"""``gateway``: where the HTTP server listens, its auth, database and metrics; a section of
``core.config.schema.CrosstalkConfig`` kept in its own module like the others."""

from __future__ import annotations

import os
from typing import Literal

from pydantic import Field, SecretStr, field_validator, model_validator

from core.config.schema_base import ConfigModel
from core.config.state_dir import default_state_dir

__all__ = [
    "DATABASE_SCHEMES",
    "DatabaseConfig",
    "GatewayAuthConfig",
    "GatewayConfig",
    "MetricsConfig",
]


class GatewayAuthConfig(ConfigModel):
    """Bearer auth of the HTTP API and web chat (D9). Read secrets with ``secret_value()``."""

    mode: Literal["token", "password"] = "token"
    token: SecretStr | None = None
    password: SecretStr | None = None

    @model_validator(mode="after")
    def _password_needs_value(self) -> GatewayAuthConfig:
        if self.mode == "password" and not (self.password and self.password.get_secret_value()):
            raise ValueError("password is required when mode is 'password'")
        return self


DATABASE_SCHEMES = ("sqlite", "sqlite+aiosqlite", "postgresql", "postgres", "postgresql+asyncpg")


class DatabaseConfig(ConfigModel):
    """``url`` ``None`` = SQLite file in the state dir; see ``CrosstalkConfig.database_url()``."""

    url: str | None = None

    @field_validator("url")
    @classmethod
    def _supported_scheme(cls, value: str | None) -> str | None:
        """Only the drivers the store ships with; anything else would fail at start (D12)."""
        if value is None or not value.strip():
            return value
        scheme = value.strip().partition("://")[0].lower()
        if scheme not in DATABASE_SCHEMES:
            raise ValueError(
                f"unsupported database URL scheme {scheme[:40]!r} "
                "(use sqlite:///PATH or postgresql://USER@HOST/DB)"
            )
        return value


class MetricsConfig(ConfigModel):
    """``gateway.metrics``: ``GET /metrics`` always needs the bearer token; ``port`` adds a
    token-free listener on 127.0.0.1 only (for a local Prometheus agent). Off by default."""

    port: int | None = Field(default=None, ge=0, le=65535)


class GatewayConfig(ConfigModel):
    """``gateway``: where the HTTP server listens and where state is kept."""

    port: int = Field(default=18789, ge=1, le=65535)
    bind: str = Field(default="127.0.0.1", min_length=1)
    auth: GatewayAuthConfig = Field(default_factory=GatewayAuthConfig)
    state_dir: str = Field(default_factory=default_state_dir)
    """`CROSSTALK_STATE_DIR`, else this, else the nearest `.crosstalk` above the current
    directory, else `~/.crosstalk` (D130)."""
    database: DatabaseConfig = Field(default_factory=DatabaseConfig)
    max_body_bytes: int = Field(default=2_097_152, ge=1)
    body_timeout_seconds: float = Field(default=60.0, gt=0)
    """A request body not fully received by then is answered 408 (D12)."""
    header_timeout_seconds: float = Field(default=20.0, gt=0, le=3600)
    """A connection that has not sent a whole request by then (slow headers, or idle between
    requests) is closed (D141)."""
    max_reply_chars: int = Field(default=16_000, ge=100)
    """A longer text leaving for a chat is cut there, with a note saying so (D142)."""
    max_connections: int = Field(default=512, ge=1)
    """Open HTTP connections at most; beyond, the oldest idle one is closed (D141). Keep it
    below the process's file limit (`LimitNOFILE` in deploy/crosstalk.service)."""
    metrics: MetricsConfig = Field(default_factory=MetricsConfig)
    dedup_window_days: float = Field(default=7.0, gt=0)
    """How long inbound platform identities and Idempotency-Keys are remembered (D16)."""
    reconcile_after_seconds: float = Field(default=10.0, ge=0)
    """A delivery left pending by an earlier process is settled once it has been quiet this
    long (another live gateway on the same database may still be sending it) (D16)."""
    watchdog_seconds: float = Field(default=60.0, gt=0)
    """A channel that has received nothing (not even an empty long poll or a pong) for this
    long is reconnected (D16)."""

    @field_validator("state_dir")
    @classmethod
    def _expand_home(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return os.path.expanduser(value.strip())
