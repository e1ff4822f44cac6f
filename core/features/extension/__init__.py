"""The extension layer: permissions, the plugin context, discovery.

Plugins import the public surface from :mod:`core.api.plugins` (docs/PLUGINS.md). This
package's ``__init__`` stays empty so the registries can import ``core.model.permission``
without a cycle. Nothing here imports ``plugins`` or ``adapters``.
"""
