"""``mcp``: MCP servers whose tools agents may use (stdio command or streamable HTTP URL)."""

from __future__ import annotations

import re

from pydantic import Field, SecretStr, field_validator, model_validator

from core.config.schema_base import ConfigModel

__all__ = ["McpConfig", "McpServerConfig"]

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,32}$")


class McpServerConfig(ConfigModel):
    """One server: ``{command, args?, env?}`` (stdio) or ``{url, headers?}`` (streamable HTTP).

    ``timeoutSeconds`` bounds connecting and each tool call: a server that hangs or dies
    gives the model a tool error, never a stuck run.
    """

    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, SecretStr] = Field(default_factory=dict)
    url: str | None = None
    headers: dict[str, SecretStr] = Field(default_factory=dict)
    timeout_seconds: float = Field(default=30.0, gt=0)

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError("set exactly one of command (stdio) or url (streamable HTTP)")
        if self.url is not None and not self.url.startswith(("http://", "https://")):
            raise ValueError(f"url must be an http(s) URL (got {self.url!r})")
        if self.command is not None and (self.headers or not self.command.strip()):
            raise ValueError("a stdio server takes command, args and env (no headers)")
        if self.url is not None and (self.args or self.env):
            raise ValueError("an HTTP server takes url and headers (no args or env)")
        return self


class McpConfig(ConfigModel):
    """``mcp.servers`` by name; agents use all of them unless ``agents.list[].mcp`` lists some."""

    servers: dict[str, McpServerConfig] = Field(default_factory=dict)

    @field_validator("servers")
    @classmethod
    def _names(cls, value: dict[str, McpServerConfig]) -> dict[str, McpServerConfig]:
        for name in value:
            if not _NAME.match(name):
                raise ValueError(f"server name {name!r}: use 1-32 letters, digits, _ or -")
        return value
