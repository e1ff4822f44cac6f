"""The channel registry (D38): channel name → config model + adapter class, from entry points.

A channel is one package with an entry point in the ``crosstalk.channels`` group whose name is
the channel's name and whose value is a :class:`ChannelSpec`. The spec's module must import no
platform SDK (it is loaded when the config is validated); the adapter class is named by a
``"module:Class"`` string and imported only when the channel is configured. Every adapter is
built the same way: ``Adapter(config, account_id, env)``. Crosstalk's own channels are entry
points of the ``crosstalk`` distribution, so core never imports ``adapters``.

A third-party channel belongs to the plugin (``crosstalk.plugins`` entry point) of the same
distribution: ``plugins.enabled`` / ``plugins.disabled`` add or remove it with the plugin's
command and tools.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cache
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import BaseModel

    from core.model.channel import ChannelAdapter, GroupTarget

GROUP = "crosstalk.channels"
DIST = "crosstalk"
log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ChannelSpec:
    """One channel: how its ``channels.<name>`` section is validated and its adapters built."""

    name: str
    config_model: type[BaseModel]
    adapter: str | Callable[..., ChannelAdapter]
    """``"package.module:Class"`` (imported only when configured) or the class itself,
    called as ``adapter(account_config, account_id, env)``."""
    accounts: Callable[[Any], list[tuple[str, Any]]] | None = None
    """The accounts of a section, ``(account id, account config)``; default: the section's
    ``iter_accounts()`` when it has one, else the section itself as ``default``."""
    order: int = 100
    dist: str | None = field(default=None, compare=False)
    guarded: bool = True
    """Who may talk is decided by D11 (owners, allowlist, pairing, group policy; D39). Only a
    channel whose every user already holds the gateway token (the web chat) says False."""
    main_session: bool = False
    """Every message is the owner's main session (the web chat, D17)."""
    group_target: GroupTarget = "kind"
    """How announces address a group (R3.6): ``"channel"`` when the platform names every group
    by a channel id (``channel:<id>``), else by the key's kind (``group:<id>``/``channel:<id>``)."""
    dm_threads: bool = False
    """A direct chat's thread (``InboundMessage.thread_id``) is a session of its own: the
    sender's DM session with a ``:thread:<id>`` suffix (D77; email threads, D171)."""
    prefer_session_lookup: bool = False
    """Announces use the session's stored route before the target parsed from its key (R3.6)."""
    default_section: bool = False
    """The section exists with its defaults when the config file has none (the web chat)."""
    env: tuple[tuple[str, str], ...] = ()
    """``(ENV_VAR, field)`` pairs: the variable fills the field of a section the file has but
    leaves unset (a token kept out of the file); the file wins."""

    def adapter_class(self) -> Callable[..., ChannelAdapter]:
        if not isinstance(self.adapter, str):
            return self.adapter
        module, _, attr = self.adapter.partition(":")
        found: Callable[..., ChannelAdapter] = getattr(importlib.import_module(module), attr)
        return found

    def account_configs(self, section: Any) -> list[tuple[str, Any]]:
        if self.accounts is not None:
            return self.accounts(section)
        iter_accounts = getattr(section, "iter_accounts", None)
        return list(iter_accounts()) if callable(iter_accounts) else [("default", section)]


class ChannelRegistryError(Exception):
    """Two channels claim one name, or an entry point is not a ChannelSpec."""


@cache
def installed_channels() -> dict[str, ChannelSpec]:
    """Every channel installed, by name: Crosstalk's own first, then by name."""
    found: dict[str, ChannelSpec] = {}
    for ep in entry_points(group=GROUP):
        spec = ep.load()
        if not isinstance(spec, ChannelSpec) or spec.name != ep.name:
            raise ChannelRegistryError(
                f"entry point {ep.name!r} ({ep.value}) in {GROUP!r} is "
                "not a ChannelSpec of that name"
            )
        dist = ep.dist.name if ep.dist is not None else None
        if ep.name in found and found[ep.name].adapter != spec.adapter:
            raise ChannelRegistryError(f"two channels are named {ep.name!r}")
        found[ep.name] = replace(spec, dist=dist)
    return dict(sorted(found.items(), key=lambda kv: (kv[1].dist != DIST, kv[1].order, kv[0])))


__all__ = ["DIST", "GROUP", "ChannelRegistryError", "ChannelSpec", "installed_channels"]
