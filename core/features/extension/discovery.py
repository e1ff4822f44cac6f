"""Find plugins through the ``crosstalk.plugins`` entry-point group and register them.

Each entry point names a ``register(ctx)`` callable (or an object or module with one). Our own
built-ins are entry points of the ``crosstalk`` distribution (pyproject.toml), so core never
imports the ``plugins`` package. ``plugins.enabled`` (when set) and ``plugins.disabled`` in the
config choose which ones load.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib.metadata import entry_points

from core.config.schema_plugins import PluginsConfig
from core.features.commands.registry import CommandRegistry
from core.features.extension.context import PluginContext
from core.features.inbound.pipeline import InboundSteps
from core.features.tools.registry import ToolRegistry
from core.model.errors import CrosstalkError

GROUP = "crosstalk.plugins"
DIST = "crosstalk"  # our own distribution, whose entry points are the built-ins
log = logging.getLogger(__name__)

Register = Callable[[PluginContext], object]


class PluginError(CrosstalkError):
    """A plugin could not be found, loaded or registered: the gateway does not start."""


@dataclass(frozen=True, slots=True)
class PluginEntry:
    name: str
    value: str
    dist: str | None


@cache
def discover() -> tuple[PluginEntry, ...]:
    """Installed plugins, built-ins first, then by name (the order tools are offered in)."""
    found: dict[str, PluginEntry] = {}
    for ep in entry_points(group=GROUP):
        dist = ep.dist.name if ep.dist is not None else None
        if ep.name in found and found[ep.name].value != ep.value:
            raise PluginError(
                f"two plugins are named {ep.name!r}: {found[ep.name].value} and {ep.value}"
            )
        found[ep.name] = PluginEntry(ep.name, ep.value, dist)
    return tuple(sorted(found.values(), key=lambda p: (p.dist != DIST, p.name)))


def selected(found: tuple[PluginEntry, ...], config: PluginsConfig) -> list[PluginEntry]:
    names = {p.name for p in found}
    if config.enabled is not None and (unknown := sorted(set(config.enabled) - names)):
        raise PluginError(
            f"plugins.enabled names plugin(s) that are not installed: "
            f"{', '.join(unknown)} (installed: {', '.join(sorted(names))})"
        )
    for name in sorted(set(config.disabled) - names):
        log.warning("plugins.disabled names %r, which is not installed", name)
    return [
        p
        for p in found
        if (config.enabled is None or p.name in config.enabled) and p.name not in config.disabled
    ]


def _register_fn(entry: PluginEntry) -> Register:
    from importlib.metadata import EntryPoint

    try:
        obj = EntryPoint(entry.name, entry.value, GROUP).load()
    except Exception as exc:
        raise PluginError(f"plugin {entry.name!r} ({entry.value}) failed to import: {exc}") from exc
    register = (
        obj if callable(obj) and not isinstance(obj, type) else getattr(obj, "register", None)
    )
    if not callable(register):
        raise PluginError(f"plugin {entry.name!r} ({entry.value}) has no register(ctx) function")
    return register  # type: ignore[no-any-return]


def load_plugins(
    config: PluginsConfig,
    *,
    tools: ToolRegistry,
    commands: CommandRegistry,
    inbound: InboundSteps | None = None,
) -> list[str]:
    """Register every enabled plugin; returns their names in load order."""
    loaded = []
    found = discover()
    if not any(p.dist == DIST for p in found):
        # A source tree run without `pip install` (or an install older than the entry points)
        # would start with no tools and no commands: refuse instead.
        raise PluginError(
            f"Crosstalk's built-in plugins are not registered in the {GROUP!r} "
            "entry-point group: install the package (pip install -e .)"
        )
    for entry in selected(found, config):
        register = _register_fn(entry)
        ctx = PluginContext(
            entry.name,
            tools=tools,
            commands=commands,
            inbound=inbound,
            options=config.options.get(entry.name),
        )
        try:
            register(ctx)
        except Exception as exc:
            raise PluginError(f"plugin {entry.name!r} failed to register: {exc}") from exc
        loaded.append(entry.name)
    log.info("plugins: %s", ", ".join(loaded) or "none")
    return loaded


__all__ = ["GROUP", "PluginEntry", "PluginError", "discover", "load_plugins", "selected"]
