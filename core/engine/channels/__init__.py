"""Channels as core sees them: the adapter protocol (D37) and the connection supervisor (D35).

Concrete adapters live in the top-level ``adapters`` package (or a plugin); core never imports
them.
"""

from core.engine.channels.supervisor import Backoff, Connection, ConnectionSupervisor
from core.model.channel import (
    AdapterState,
    AdapterStatus,
    ChannelAdapter,
    ChannelLease,
    ChunkRef,
    HttpMounted,
    InboundSink,
    SendReceipt,
)

__all__ = [
    "AdapterState",
    "AdapterStatus",
    "Backoff",
    "ChannelAdapter",
    "ChannelLease",
    "ChunkRef",
    "Connection",
    "ConnectionSupervisor",
    "HttpMounted",
    "InboundSink",
    "SendReceipt",
]
