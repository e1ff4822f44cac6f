"""Shared pieces of tool argument models: camelCase names, JSON-schema `number`, clamping."""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class ToolArgs(BaseModel):
    """Base for tool arguments: camelCase on the wire, unknown keys ignored (models add them)."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="ignore", frozen=True
    )


def floor_clamp(
    value: float | None, *, default: int | None, lo: int, hi: int | None = None
) -> int | None:
    """Floor a numeric argument into [lo, hi]; a missing or non-finite value gives `default`."""
    if value is None or not math.isfinite(value):
        return default
    out = max(lo, math.floor(value))
    return min(out, hi) if hi is not None else out


def required_text(value: str | None, name: str) -> str:
    from core.model.errors import ToolInputError

    text = (value or "").strip()
    if not text:
        raise ToolInputError(f"{name} required")
    return text
