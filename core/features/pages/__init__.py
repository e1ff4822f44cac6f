"""What a channel serving the gateway's own pages (the web chat) reads of the gateway (D30, D97).

The web chat shows the default agent's main session and its history, lists the chat commands,
names the model that answers, follows turns that run on other processes (the event bus, D28) and
starts the model stack's import when a page opens (D54). The runtime builds one
:class:`GatewayPages` and hands it to the channel in ``ChannelEnv.gateway``; the web chat types
it by its own narrow protocol (adapters/webchat/env.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from core.config import CrosstalkConfig
    from core.engine.cluster.events import EventBus
    from core.features.commands.registry import CommandRegistry
    from core.features.models.resolver import ModelResolver
    from core.features.models.warmup import ModelWarmup
    from core.model.key_model import KeyModel
    from core.store import Store


@dataclass(frozen=True, slots=True)
class GatewayPages:
    config: CrosstalkConfig
    keys: KeyModel
    store: Store
    models: ModelResolver
    commands: CommandRegistry
    state_dir: Path
    bus: EventBus
    warm: ModelWarmup

    def warm_up_soon(self) -> None:
        """Someone is about to talk (a chat page or socket opened, D54)."""
        self.warm.soon()


__all__ = ["GatewayPages"]
