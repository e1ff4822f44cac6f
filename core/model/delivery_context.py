"""Where a session's replies go: the normalised `deliveryContext` of reference [6].

Every `DeliveryContext` is normalised when it is built (channel aliases, trimmed `to` and
`accountId`, integral numeric `threadId`), so two contexts naming the same route compare equal
and no caller can hand the outbound gate an untrimmed target. `to` keeps its case: platform ids
such as Slack's `C0123` are case-sensitive.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
)

if TYPE_CHECKING:
    from core.model.records import SessionEntry

__all__ = [
    "CHANNEL_ALIASES",
    "REFERENCE_CHANNELS",
    "DeliveryContext",
    "delivery_context_key",
    "merge_delivery_context",
    "normalize_channel",
    "normalize_delivery_context",
    "session_delivery_fields",
    "session_target",
]

REFERENCE_CHANNELS: frozenset[str] = frozenset({"imessage", "googlechat"})
"""Channels the reference knows (R3.6) that Crosstalk ships no adapter for; every channel we do
ship is known by its installed spec (D94), so core names none of them."""
CHANNEL_ALIASES: Mapping[str, str] = {
    "imsg": "imessage",
    "google-chat": "googlechat",
    "gchat": "googlechat",
}


def normalize_channel(name: object) -> str | None:
    """Trimmed, lowercased, alias-resolved channel id; unknown channels stay lowercased."""
    if not isinstance(name, str):
        return None
    value = name.strip().lower()
    if not value:
        return None
    return CHANNEL_ALIASES.get(value, value)


def _trimmed(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    return value.strip() or None


def _thread_id(value: object) -> str | int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return math.trunc(value) if math.isfinite(value) else None
    return _trimmed(value)


def _is_none(value: object) -> bool:
    return value is None


class DeliveryContext(BaseModel):
    """A reply route `{channel, to, accountId, threadId}`; JSON uses camelCase, omits nulls."""

    model_config = ConfigDict(
        frozen=True, populate_by_name=True, serialize_by_alias=True, extra="ignore"
    )

    channel: str | None = Field(default=None, exclude_if=_is_none)
    to: str | None = Field(default=None, exclude_if=_is_none)
    account_id: str | None = Field(
        default=None,
        exclude_if=_is_none,
        validation_alias=AliasChoices("accountId", "account_id"),
        serialization_alias="accountId",
    )
    thread_id: str | int | None = Field(
        default=None,
        exclude_if=_is_none,
        validation_alias=AliasChoices("threadId", "thread_id"),
        serialization_alias="threadId",
    )

    @field_validator("channel", mode="before")
    @classmethod
    def _channel(cls, value: object) -> str | None:
        return normalize_channel(value)

    @field_validator("to", "account_id", mode="before")
    @classmethod
    def _trim(cls, value: object) -> str | None:
        return _trimmed(value)

    @field_validator("thread_id", mode="before")
    @classmethod
    def _thread(cls, value: object) -> str | int | None:
        return _thread_id(value)

    def is_empty(self) -> bool:
        """True when no field survived normalisation (reference: the context is undefined)."""
        return (self.channel, self.to, self.account_id, self.thread_id) == (None,) * 4


ContextLike = Mapping[str, Any] | DeliveryContext | None


def normalize_delivery_context(value: ContextLike) -> DeliveryContext | None:
    """A normalised context, or None when nothing usable is left (reference `undefined`)."""
    if value is None:
        return None
    ctx = (
        value if isinstance(value, DeliveryContext) else DeliveryContext.model_validate(dict(value))
    )
    return None if ctx.is_empty() else ctx


def merge_delivery_context(primary: ContextLike, fallback: ContextLike) -> DeliveryContext | None:
    """Field by field: the primary's value when present, else the fallback's."""
    first = normalize_delivery_context(primary)
    second = normalize_delivery_context(fallback)
    if first is None:
        return second
    if second is None:
        return first
    return DeliveryContext(
        channel=first.channel if first.channel is not None else second.channel,
        to=first.to if first.to is not None else second.to,
        account_id=first.account_id if first.account_id is not None else second.account_id,
        thread_id=first.thread_id if first.thread_id is not None else second.thread_id,
    )


def delivery_context_key(ctx: ContextLike) -> str | None:
    """`channel|to|accountId|threadId`, used to split announce queues; needs channel and to."""
    norm = normalize_delivery_context(ctx)
    if norm is None or norm.channel is None or norm.to is None:
        return None
    thread = "" if norm.thread_id is None else str(norm.thread_id)
    return f"{norm.channel}|{norm.to}|{norm.account_id or ''}|{thread}"


def session_delivery_fields(
    *,
    last_channel: str | None = None,
    last_to: str | None = None,
    last_account_id: str | None = None,
    last_thread_id: str | int | None = None,
    channel: str | None = None,
    delivery_context: ContextLike = None,
) -> DeliveryContext | None:
    """A session entry's route: `last*` fields win, gaps come from `deliveryContext`.

    The entry's origin `channel` is only the last resort for the channel, so a stale origin
    never pairs with a `to` that belongs to another platform.
    """
    merged = merge_delivery_context(
        DeliveryContext(
            channel=last_channel,
            to=last_to,
            account_id=last_account_id,
            thread_id=last_thread_id,
        ),
        delivery_context,
    )
    return merge_delivery_context(merged, DeliveryContext(channel=channel))


def session_target(entry: SessionEntry | None) -> DeliveryContext | None:
    """Where replies for a session go: its last route (the `last*` fields win)."""
    if entry is None:
        return None
    return session_delivery_fields(
        last_channel=entry.last_channel,
        last_to=entry.last_to,
        last_account_id=entry.last_account_id,
        last_thread_id=entry.last_thread_id,
        channel=entry.channel,
        delivery_context=None,
    )
