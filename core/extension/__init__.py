"""The extension layer's public surface: permissions, the plugin context, discovery.

A plugin is a Python package with an entry point in the ``crosstalk.plugins`` group that names
one ``register(ctx: PluginContext)`` function (docs/PLUGINS.md). The built-in plugins register
through the same API. Nothing here imports ``plugins`` or ``adapters``.
"""

from core.extension.permission import EVERYONE, OWNER, Caller, Permission

__all__ = ["EVERYONE", "OWNER", "Caller", "Permission"]
