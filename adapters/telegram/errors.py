"""PTB exceptions → Crosstalk's typed delivery errors, so the gate can retry or record them."""

from __future__ import annotations

import datetime as dtm
import warnings

from telegram.error import (
    BadRequest,
    ChatMigrated,
    Forbidden,
    InvalidToken,
    NetworkError,
    RetryAfter,
    TelegramError,
)

from core.api.channels import (
    ChannelUnavailable,
    DeliveryError,
    RateLimited,
    TargetForbidden,
    TargetNotFound,
)

_NOT_FOUND_MARKERS = ("chat not found", "thread not found", "user not found", "peer_id_invalid")


def retry_after_seconds(exc: RetryAfter) -> float:
    """The wait Telegram asked for, in seconds (PTB 22 warns while moving it to timedelta)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = exc.retry_after
    if isinstance(value, dtm.timedelta):
        return value.total_seconds()
    return float(value)


def delivery_error(exc: TelegramError, where: str) -> DeliveryError:
    """Map one PTB error raised while sending to ``where`` (e.g. "telegram chat 42").

    Order matters: RetryAfter, ChatMigrated, Forbidden, BadRequest and InvalidToken are all
    TelegramError, and BadRequest/TimedOut/InvalidToken subclass NetworkError in PTB.
    """
    if isinstance(exc, RetryAfter):
        return RateLimited(f"{where}: {exc.message}", retry_after_seconds(exc))
    if isinstance(exc, ChatMigrated):
        return TargetNotFound(f"{where}: group moved to supergroup {exc.new_chat_id}")
    if isinstance(exc, Forbidden):
        return TargetForbidden(f"{where}: {exc.message}")
    if isinstance(exc, InvalidToken):
        return ChannelUnavailable(f"{where}: bot token rejected")
    if isinstance(exc, BadRequest):
        text = exc.message.lower()
        if any(marker in text for marker in _NOT_FOUND_MARKERS):
            return TargetNotFound(f"{where}: {exc.message}")
        return DeliveryError(f"{where}: {exc.message}")
    if isinstance(exc, NetworkError):
        return ChannelUnavailable(f"{where}: {exc.message}")
    return DeliveryError(f"{where}: {exc.message}")
