"""Session keys: the one place that builds, parses, normalises and classifies them (D1, [1]).

Stored keys are canonical: trimmed, lowercased `agent:<agentId>:<rest>`; only the reserved
`global` and `unknown` stay bare. Kind is classified on the rest after `agent:<id>:`, so the
documented model (`main`, `cron:…`, `hook:…`, `node-…`, `…:group:…`) holds for stored keys too.
Everything here is pure; config values are bound once in `core.model.key_model.KeyModel`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from core.model.delivery_context import REFERENCE_CHANNELS, DeliveryContext, normalize_channel
from core.model.text import clean_text

if TYPE_CHECKING:
    from core.model.channel import ChannelTraits

__all__ = [
    "DEFAULT_ACCOUNT_ID",
    "DEFAULT_AGENT_ID",
    "DEFAULT_MAIN_KEY",
    "MAX_KEY_LENGTH",
    "RESERVED_KEYS",
    "AnnounceTarget",
    "DmScope",
    "InvalidSessionKey",
    "ParsedKey",
    "SessionKind",
    "agent_id_of",
    "is_key_shaped",
    "is_subagent_key",
    "is_uuid",
    "multiple_sessions_found",
    "no_session_found",
    "normalize_account_id",
    "normalize_agent_id",
    "normalize_main_key",
    "not_visible_from_sandbox",
    "parse_agent_key",
    "parse_announce_target",
    "session_not_found",
]

DEFAULT_AGENT_ID = "main"
DEFAULT_MAIN_KEY = "main"
DEFAULT_ACCOUNT_ID = "default"
RESERVED_KEYS: frozenset[str] = frozenset({"global", "unknown"})

SessionKind = Literal["main", "group", "cron", "hook", "node", "other"]
DmScope = Literal["main", "per-peer", "per-channel-peer", "per-account-channel-peer"]
Scope = Literal["per-sender", "global"]

_VALID_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$", re.IGNORECASE)
_INVALID_RUN = re.compile(r"[^a-z0-9_-]+")
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I)
_THREAD_SUFFIX = re.compile(r":(topic|thread):(\d+(?:\.\d+)?)$")
SURROGATE = re.compile("[\ud800-\udfff]")
_KEY_PREFIXES = ("agent:", "cron:", "hook:", "node-", "node:", "acp:")


MAX_KEY_LENGTH = 256
"""Longest stored session key, in characters (D12)."""


class InvalidSessionKey(ValueError):
    """A key that cannot name any session (empty, only separators, or too long).

    The message starts with `invalid session key`; the HTTP edge answers it with 400.
    """


@dataclass(frozen=True, slots=True)
class ParsedKey:
    """An `agent:<agent_id>:<rest>` key split into its normalised parts."""

    agent_id: str
    rest: str


@dataclass(frozen=True, slots=True)
class AnnounceTarget:
    """Where an A2A announce for a group/channel session goes, derived from its key (R3.6)."""

    channel: str
    to: str
    thread_id: str | None = None

    def as_delivery_context(self) -> DeliveryContext:
        return DeliveryContext(channel=self.channel, to=self.to, thread_id=self.thread_id)


def _normalize_id(value: str | None, fallback: str) -> str:
    raw = (value or "").strip()
    if not raw:
        return fallback
    if _VALID_ID.match(raw):
        return raw.lower()
    return _INVALID_RUN.sub("-", raw.lower()).strip("-")[:64] or fallback


def normalize_agent_id(value: str | None) -> str:
    """R1.2: `"My Agent!"` → `my-agent`; blank → `main`."""
    return _normalize_id(value, DEFAULT_AGENT_ID)


def normalize_account_id(value: str | None) -> str:
    """R1.2 account id inside session keys; blank → `default`."""
    return _normalize_id(value, DEFAULT_ACCOUNT_ID)


def normalize_main_key(value: str | None) -> str:
    """`session.mainKey`, trimmed and lowercased; blank → `main`."""
    return (value or "").strip().lower() or DEFAULT_MAIN_KEY


def clean_key(value: str) -> str:
    return clean_text(value).strip().lower().strip()  # D12: no NUL/lone surrogate in a key


def key_segments(value: str) -> list[str]:
    """Key segments, each trimmed; empty ones are dropped as in the reference parser."""
    return [seg for part in value.split(":") if (seg := part.strip())]


def is_uuid(value: str | None) -> bool:
    """sessionId-shaped: 8-4-4-4-12 hex, any case (R1.7)."""
    return bool(value) and _UUID.match((value or "").strip()) is not None


def parse_agent_key(key: str | None) -> ParsedKey | None:
    """`agent:<id>:<rest>` with both parts non-empty, else None; empty segments are dropped."""
    parts = key_segments(clean_key(key or ""))
    if len(parts) < 3 or parts[0] != "agent":
        return None
    return ParsedKey(normalize_agent_id(parts[1]), ":".join(parts[2:]))


def agent_id_of(key: str | None) -> str:
    """The key's agent id; a bare key counts as `main`, as in the reference (R1.8)."""
    parsed = parse_agent_key(key)
    return parsed.agent_id if parsed else DEFAULT_AGENT_ID


def rest_of(key: str) -> str:
    parsed = parse_agent_key(key)
    return parsed.rest if parsed else ":".join(key_segments(clean_key(key)))


def is_subagent_key(key: str | None) -> bool:
    """Sessions created by `sessions_spawn` (R1.9); these may not spawn again."""
    return rest_of(key or "").startswith("subagent:")


def is_key_shaped(value: str | None) -> bool:
    """Looks like a session key rather than a sessionId or label, so needs no lookup (R1.7)."""
    raw = clean_key(value or "")
    if not raw:
        return False
    if raw in ("main", *RESERVED_KEYS) or raw.startswith(_KEY_PREFIXES):
        return True
    return ":group:" in raw or ":channel:" in raw


def is_group_rest(rest: str) -> bool:
    return any(rest.startswith(f"{seg}:") or f":{seg}:" in rest for seg in ("group", "channel"))


_ROUTE_MARKERS: dict[str, Literal["direct", "group", "channel"]] = {
    "group": "group",
    "channel": "channel",
    "dm": "direct",
}


def route_of_key(
    session_key: str | None,
) -> tuple[str | None, Literal["direct", "group", "channel"] | None]:
    """Channel and chat type encoded in a key, prefixed (``agent:<id>:…``) or bare legacy.

    The first ``group``/``channel``/``dm`` segment of the key's rest gives the chat type; the
    segment before it (or two before it, for ``<channel>:<account>:dm:<peer>``) is the
    channel. Unlike the reference, this also works for ``agent:``-prefixed keys.
    """
    key = (session_key or "").strip().lower()
    if not key:
        return None, None
    parts = [part for part in key.split(":") if part]
    rest = parts[2:] if len(parts) >= 3 and parts[0] == "agent" else parts
    for index, part in enumerate(rest):
        marker = _ROUTE_MARKERS.get(part)
        if marker is None:
            continue
        if index + 1 >= len(rest):
            return None, None
        return (rest[0] if index in (1, 2) else None), marker
    return None, None


def parse_announce_target(
    key: str | None, channels: Mapping[str, ChannelTraits] | None = None
) -> AnnounceTarget | None:
    """`[agent:<id>:]<channel>:group|channel:<id>[:topic|thread:<n>]` → announce target (R3.6).

    `channels` are the installed channels' traits (D94): a known channel's `group_target` says
    how its groups are addressed; a channel neither installed nor known to the reference gets
    the bare id. Thread ids may be Slack timestamps (`1700000000.123456`) as well as digits.
    """
    parts = key_segments(rest_of(key or ""))
    if len(parts) < 3 or parts[1] not in ("group", "channel"):
        return None
    raw_channel, chat_type, *rest = parts
    chat_id = ":".join(rest)
    thread_id: str | None = None
    if match := _THREAD_SUFFIX.search(chat_id):
        thread_id = match.group(2)
        chat_id = chat_id[: match.start()]
    if not chat_id:
        return None
    channel = normalize_channel(raw_channel) or raw_channel
    traits = (channels or {}).get(channel)
    if traits is None and channel not in REFERENCE_CHANNELS:
        to = chat_id
    elif (traits is not None and traits.group_target == "channel") or chat_type == "channel":
        to = f"channel:{chat_id}"
    else:
        to = f"group:{chat_id}"
    return AnnounceTarget(channel=channel, to=to, thread_id=thread_id)


def no_session_found(session_id: str) -> str:
    return f"No session found: {session_id}"


def multiple_sessions_found(session_id: str, keys: Sequence[str]) -> str:
    return f"Multiple sessions found for sessionId: {session_id} ({', '.join(keys)})"


def session_not_found(session_id: str) -> str:
    return f"Session not found: {session_id} (use the full sessionKey from sessions_list)"


def not_visible_from_sandbox(raw: str) -> str:
    return f"Session not visible from this sandboxed agent session: {raw}"
