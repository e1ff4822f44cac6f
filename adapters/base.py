"""The adapter interface, re-exported from :mod:`core.model.channel` (D37: core owns it)."""

from core.api.channels import (
    AdapterState,
    AdapterStatus,
    ChannelAdapter,
    ChunkRef,
    HttpMounted,
    InboundSink,
    MediaItem,
    SendReceipt,
)

__all__ = [
    "AdapterState",
    "AdapterStatus",
    "ChannelAdapter",
    "ChunkRef",
    "HttpMounted",
    "InboundSink",
    "MediaItem",
    "SendReceipt",
]
