"""What the web chat reads of the gateway (D30): a narrow protocol, not the runtime.

The web chat serves the gateway's own pages, so it needs more than a platform channel: the
default agent's main session and its history, the chat commands it lists, the model that
answers, and the cluster's event bus (turns run on other processes, D28). The runtime
builds a ``GatewayPages`` that satisfies this protocol and hands it over in ``ChannelEnv.gateway``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from core.api.gateway import (
    CommandRegistry,
    CrosstalkConfig,
    EventBus,
    KeyModel,
    ModelResolver,
    SessionStore,
)


class WebchatEnv(Protocol):
    @property
    def config(self) -> CrosstalkConfig: ...

    @property
    def keys(self) -> KeyModel: ...

    @property
    def store(self) -> SessionStore: ...

    @property
    def models(self) -> ModelResolver: ...

    @property
    def commands(self) -> CommandRegistry: ...

    @property
    def state_dir(self) -> Path: ...

    @property
    def bus(self) -> EventBus: ...
