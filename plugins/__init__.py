"""Crosstalk's built-in capability packs, ordinary plugins of the ``crosstalk.plugins`` group.

Each module exposes ``register(ctx: PluginContext)`` and is named by an entry point in
pyproject.toml (``session-tools``, ``chat-commands``, ``cron-tools``); the runtime finds them
exactly as it finds a third-party package (core.features.extension.discovery), and core never
imports this package.
"""

from __future__ import annotations

from core.api.plugins import PluginContext

PluginAPI = PluginContext  # the name used before plugins were entry points

__all__ = ["PluginAPI", "PluginContext"]
