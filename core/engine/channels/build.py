"""Build the adapters the config asks for, from the channel registry (D38).

:mod:`core.config.channel_registry` knows which channels are installed (it validates their
config sections); this module picks the selected ones (``plugins.enabled``/``disabled``) and
builds one adapter per configured account.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any

from core.config.channel_registry import (
    DIST,
    GROUP,
    ChannelRegistryError,
    ChannelSpec,
    installed_channels,
)

if TYPE_CHECKING:
    from pathlib import Path

    from core.config import CrosstalkConfig
    from core.model.channel import ChannelAdapter


@dataclass(frozen=True, slots=True)
class ChannelEnv:
    """What core hands every adapter at construction."""

    state_dir: Path | None = None
    gateway: Any = None
    """What a channel serving the gateway's own pages reads (the web chat: history, commands,
    models, the event bus; core.features.pages.GatewayPages, D97); a platform never needs it."""


def _plugin_dists() -> dict[str, str | None]:
    return {
        ep.name: (ep.dist.name if ep.dist is not None else None)
        for ep in entry_points(group="crosstalk.plugins")
    }


def selected_channels(config: CrosstalkConfig) -> list[ChannelSpec]:
    """Installed channels whose plugin is selected (``plugins.enabled``/``disabled``)."""
    plugins = _plugin_dists()
    chosen = {
        name
        for name in plugins
        if (config.plugins.enabled is None or name in config.plugins.enabled)
        and name not in config.plugins.disabled
    }
    out = []
    for spec in installed_channels().values():
        owners = {name for name, dist in plugins.items() if dist == spec.dist}
        if spec.dist == DIST or not owners or owners & chosen:
            out.append(spec)
    return out


def build_adapters(config: CrosstalkConfig, env: ChannelEnv) -> list[ChannelAdapter]:
    """One adapter per account of every configured, enabled channel (D38)."""
    if not any(spec.dist == DIST for spec in installed_channels().values()):
        raise ChannelRegistryError(
            f"Crosstalk's own channels are not registered in the {GROUP!r} entry-point group: "
            "install the package (pip install -e .)"
        )
    out: list[ChannelAdapter] = []
    for spec in selected_channels(config):
        section = getattr(config.channels, spec.name, None)
        if section is None or not getattr(section, "enabled", True):
            continue
        cls = spec.adapter_class()
        out.extend(
            cls(account, account_id, env) for account_id, account in spec.account_configs(section)
        )
    return out


__all__ = ["ChannelEnv", "build_adapters", "selected_channels"]
