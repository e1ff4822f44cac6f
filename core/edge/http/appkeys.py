"""Typed aiohttp application keys (aiohttp's `AppKey`, not string keys)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web

if TYPE_CHECKING:
    from core.runtime import Runtime

RUNTIME: web.AppKey[Runtime] = web.AppKey("runtime")
SECRET: web.AppKey[str] = web.AppKey("secret", str)
