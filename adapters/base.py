"""The adapter interface, re-exported from :mod:`core.channels.protocol` (D37: core owns it)."""

from core.channels.protocol import (
    AdapterState,
    AdapterStatus,
    ChannelAdapter,
    ChunkRef,
    HttpMounted,
    InboundSink,
    SendReceipt,
)

__all__ = [
    "AdapterState",
    "AdapterStatus",
    "ChannelAdapter",
    "ChunkRef",
    "HttpMounted",
    "InboundSink",
    "SendReceipt",
]
