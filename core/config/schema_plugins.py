"""``plugins``: which installed plugins (``crosstalk.plugins`` entry points) load."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from core.config.schema_base import ConfigModel

__all__ = ["PluginsConfig"]


class PluginsConfig(ConfigModel):
    """``enabled`` (when given) is the complete list to load, built-ins included;
    ``disabled`` always wins. ``options.<name>`` is handed to that plugin as ``ctx.options``."""

    enabled: list[str] | None = None
    disabled: list[str] = Field(default_factory=list)
    options: dict[str, dict[str, Any]] = Field(default_factory=dict)
