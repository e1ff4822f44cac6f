"""discord.py/aiohttp failures → Crosstalk's typed delivery errors, and a time bound on REST
calls: discord.py's own HTTP session has none but aiohttp's five minutes, so a send Discord
never answers would hold its delivery that long; bounded, it is a fault the gate retries
(D142), and a chunk's nonce keeps the resend from doubling it (D16)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

import aiohttp
import discord

from core.api.channels import (
    ChannelUnavailable,
    DeliveryError,
    RateLimited,
    TargetForbidden,
    TargetNotFound,
)

T = TypeVar("T")


async def bounded(call: Awaitable[T], seconds: float, where: str) -> T:
    """`call`'s result; no answer within `seconds` is `ChannelUnavailable` (retried), any
    other failure its typed error."""
    try:
        return await asyncio.wait_for(call, seconds)
    except TimeoutError as exc:
        raise ChannelUnavailable(f"{where}: no answer from Discord in {seconds:g}s") from exc
    except Exception as exc:
        raise delivery_error(exc, where) from exc


def delivery_error(exc: Exception, where: str) -> DeliveryError:
    """Map a discord.py/aiohttp failure onto the gate's typed errors."""
    if isinstance(exc, discord.RateLimited):
        return RateLimited(f"{where}: rate limited", exc.retry_after)
    if isinstance(exc, discord.Forbidden):
        return TargetForbidden(f"{where}: forbidden ({exc.text or exc.status})")
    if isinstance(exc, discord.NotFound):
        return TargetNotFound(f"{where}: not found ({exc.text or exc.status})")
    if isinstance(exc, discord.HTTPException):
        if exc.status == 429:  # discord.py gave up after its own retries, or a Cloudflare limit
            return RateLimited(f"{where}: rate limited", retry_after(exc))
        if exc.status >= 500:
            return ChannelUnavailable(f"{where}: Discord server error {exc.status}")
        return DeliveryError(f"{where}: rejected ({exc.status}: {exc.text})")
    if isinstance(exc, aiohttp.ClientError | OSError | TimeoutError):
        return ChannelUnavailable(f"{where}: {type(exc).__name__}: {exc}")
    if isinstance(exc, DeliveryError):
        return exc
    return ChannelUnavailable(f"{where}: {type(exc).__name__}: {exc}")


def retry_after(exc: discord.HTTPException) -> float:
    header = exc.response.headers.get("Retry-After") if exc.response is not None else None
    try:
        return float(header) if header else 1.0
    except ValueError:
        return 1.0
