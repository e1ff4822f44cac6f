"""What a channel package imports: ``from core.api.channels import ChannelSpec, …`` (D37, D38).

Safe to import from a channel's spec module, which is loaded while ``core.config`` itself is
being imported (the channel sections are built from the installed specs): so this module
imports config submodules, never the ``core.config`` package, and nothing here imports a
platform SDK, the model stack or the runtime. Rendering helpers are in
:mod:`core.api.rendering`; what the web chat reads of the gateway is in :mod:`core.api.gateway`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.config.channel_registry import ChannelSpec
from core.config.schema_base import ConfigModel, IdList, secret_value
from core.config.schema_channels import (
    AccountConfig,
    AccountGroupsConfig,
    ChannelCommon,
    check_url,
    iter_accounts,
    normalize_accounts,
)
from core.engine.channels.build import ChannelEnv
from core.engine.channels.supervisor import Backoff, Connection, ConnectionSupervisor
from core.model.approvals import Button
from core.model.attachments import Attachment, AttachmentKind, kind_of_mime
from core.model.channel import (
    AdapterState,
    AdapterStatus,
    Admit,
    ChannelAdapter,
    ChannelLease,
    ChunkRef,
    CommandMenu,
    HttpMounted,
    InboundSink,
    SendReceipt,
)
from core.model.delivery_context import DeliveryContext
from core.model.errors import (
    ChannelUnavailable,
    DeliveryError,
    RateLimited,
    TargetForbidden,
    TargetNotFound,
)
from core.model.inbound import ChatType, InboundMessage
from core.model.media import MediaItem

if TYPE_CHECKING:
    from aiohttp import web


def request_authorized(request: web.Request, *, query: bool = False) -> bool:
    """True when an HTTP request to a mounted route carries the gateway token (D12): in the
    `Authorization` header, or with `query` also as `?token=` (D81: only a page or socket a
    browser opens itself may take it there)."""
    from core.edge.http.appkeys import SECRET
    from core.edge.http.auth import is_authorized

    return is_authorized(request, request.app[SECRET], query=query)


__all__ = [
    "AccountConfig",
    "AccountGroupsConfig",
    "AdapterState",
    "AdapterStatus",
    "Admit",
    "Attachment",
    "AttachmentKind",
    "Backoff",
    "Button",
    "ChannelAdapter",
    "ChannelCommon",
    "ChannelEnv",
    "ChannelLease",
    "ChannelSpec",
    "ChannelUnavailable",
    "ChatType",
    "ChunkRef",
    "CommandMenu",
    "ConfigModel",
    "Connection",
    "ConnectionSupervisor",
    "DeliveryContext",
    "DeliveryError",
    "HttpMounted",
    "IdList",
    "InboundMessage",
    "InboundSink",
    "MediaItem",
    "RateLimited",
    "SendReceipt",
    "TargetForbidden",
    "TargetNotFound",
    "check_url",
    "iter_accounts",
    "kind_of_mime",
    "normalize_accounts",
    "request_authorized",
    "secret_value",
]
