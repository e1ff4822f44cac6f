"""What a channel that serves the gateway's own pages (the web chat) reads of the gateway.

The web chat shows the default agent's main session and its history, lists the chat commands,
names the model that answers and follows turns that run on other processes (D28), so it needs
more than a platform channel: these types, typed narrowly (adapters/webchat/env.py), never the
runtime (D30).
"""

from __future__ import annotations

from core.config import CrosstalkConfig
from core.engine.cluster.events import EventBus, PgEventBus
from core.features.commands.registry import CommandRegistry
from core.features.models.resolver import ModelResolver
from core.features.services import SessionStore
from core.model.attachments import human_size, text_with_placeholders
from core.model.key_model import KeyModel
from core.model.records import TranscriptMessage
from core.model.text import clean_text
from core.store import now_ms

__all__ = [
    "CommandRegistry",
    "CrosstalkConfig",
    "EventBus",
    "KeyModel",
    "ModelResolver",
    "PgEventBus",
    "SessionStore",
    "TranscriptMessage",
    "clean_text",
    "human_size",
    "now_ms",
    "text_with_placeholders",
]
