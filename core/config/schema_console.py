"""``console`` section (decision D79): the owner console's sign-in sessions."""

from __future__ import annotations

from pydantic import Field

from core.config.schema_base import ConfigModel

__all__ = ["ConsoleConfig"]


class ConsoleConfig(ConfigModel):
    session_hours: float = Field(default=12.0, gt=0.0, le=24.0 * 366)
    """How long a console sign-in lasts (D79); sign-out ends it at once."""
