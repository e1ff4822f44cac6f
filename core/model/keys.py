"""Session keys: the one place that builds, parses, normalises and classifies them (D1, [1]).

Stored keys are canonical: trimmed, lowercased `agent:<agentId>:<rest>`; only the reserved
`global` and `unknown` stay bare. Kind is classified on the rest after `agent:<id>:`, so the
documented model (`main`, `cron:…`, `hook:…`, `node-…`, `…:group:…`) holds for stored keys too.
Everything here is pure; config values are bound once in `KeyModel`.
"""

from __future__ import annotations

import re
import uuid
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
    "KeyModel",
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
_SURROGATE = re.compile("[\ud800-\udfff]")
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


def _clean(value: str) -> str:
    return clean_text(value).strip().lower().strip()  # D12: no NUL/lone surrogate in a key


def _segments(value: str) -> list[str]:
    """Key segments, each trimmed; empty ones are dropped as in the reference parser."""
    return [seg for part in value.split(":") if (seg := part.strip())]


def is_uuid(value: str | None) -> bool:
    """sessionId-shaped: 8-4-4-4-12 hex, any case (R1.7)."""
    return bool(value) and _UUID.match((value or "").strip()) is not None


def parse_agent_key(key: str | None) -> ParsedKey | None:
    """`agent:<id>:<rest>` with both parts non-empty, else None; empty segments are dropped."""
    parts = _segments(_clean(key or ""))
    if len(parts) < 3 or parts[0] != "agent":
        return None
    return ParsedKey(normalize_agent_id(parts[1]), ":".join(parts[2:]))


def agent_id_of(key: str | None) -> str:
    """The key's agent id; a bare key counts as `main`, as in the reference (R1.8)."""
    parsed = parse_agent_key(key)
    return parsed.agent_id if parsed else DEFAULT_AGENT_ID


def _rest_of(key: str) -> str:
    parsed = parse_agent_key(key)
    return parsed.rest if parsed else ":".join(_segments(_clean(key)))


def is_subagent_key(key: str | None) -> bool:
    """Sessions created by `sessions_spawn` (R1.9); these may not spawn again."""
    return _rest_of(key or "").startswith("subagent:")


def is_key_shaped(value: str | None) -> bool:
    """Looks like a session key rather than a sessionId or label, so needs no lookup (R1.7)."""
    raw = _clean(value or "")
    if not raw:
        return False
    if raw in ("main", *RESERVED_KEYS) or raw.startswith(_KEY_PREFIXES):
        return True
    return ":group:" in raw or ":channel:" in raw


def _is_group_rest(rest: str) -> bool:
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
    parts = _segments(_rest_of(key or ""))
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


def _token(value: str | int | None, fallback: str = "unknown") -> str:
    """One key segment: trimmed, lowercased; blank → `unknown` so the key still parses."""
    return _clean("" if value is None else str(value)) or fallback


def _id_segment(value: str | int | None, fallback: str = "unknown") -> str:
    """A platform id as one segment: `:` is escaped, so a peer named `group:x` (web chat
    peers are chosen by the client) cannot make its DM look like a group or a thread."""
    return _token(value, fallback).replace("%", "%25").replace(":", "%3a")


class KeyModel:
    """Key rules bound to `session.*` config: mainKey, scope, dmScope, identityLinks."""

    __slots__ = ("_links", "channels", "default_agent_id", "dm_scope", "main_key", "scope")

    def __init__(
        self,
        *,
        main_key: str = DEFAULT_MAIN_KEY,
        scope: Scope = "per-sender",
        default_agent_id: str = DEFAULT_AGENT_ID,
        dm_scope: DmScope = "main",
        identity_links: Mapping[str, Sequence[str]] | None = None,
        channels: Mapping[str, ChannelTraits] | None = None,
    ) -> None:
        self.main_key = normalize_main_key(main_key)
        self.channels: Mapping[str, ChannelTraits] = dict(channels or {})
        """The installed channels' traits (D94): main-session channels, announce targets."""
        self.scope: Scope = scope
        self.default_agent_id = normalize_agent_id(default_agent_id)
        self.dm_scope: DmScope = dm_scope
        self._links: dict[str, str] = {}
        for name, ids in (identity_links or {}).items():
            person = _clean(name)
            if not person:
                continue
            for peer in ids:
                self._links.setdefault(_clean(peer), person)

    def _agent(self, agent_id: str | None) -> str:
        return (
            normalize_agent_id(agent_id)
            if agent_id and agent_id.strip()
            else (self.default_agent_id)
        )

    def main_session_key(self, agent_id: str | None = None) -> str:
        """The agent's main DM bucket; `global` under global scope (R1.3, R1.4)."""
        if self.scope == "global":
            return "global"
        return f"agent:{self._agent(agent_id)}:{self.main_key}"

    def canonical(self, raw: str, agent_id: str | None = None) -> str:
        """The store key for `raw` (D1). Bare keys belong to `agent_id`, else the default agent.

        `agent:<id>` alone names that agent's main session. Raises InvalidSessionKey when
        nothing but separators and whitespace is given, or when the canonical key would be
        longer than `MAX_KEY_LENGTH` characters (D12).
        """
        parts = _segments(_clean(raw))
        if not parts:
            raise InvalidSessionKey(f"invalid session key: {raw[:80]!r}")
        if _SURROGATE.search(raw):  # undecodable bytes of a header or path (D12)
            raise InvalidSessionKey("invalid session key: not valid UTF-8")
        if len(parts) == 1 and parts[0] in RESERVED_KEYS:
            return parts[0]
        if parts[0] == "agent" and len(parts) >= 2:
            owner = normalize_agent_id(parts[1])
            rest = ":".join(parts[2:])
        else:
            owner, rest = self._agent(agent_id), ":".join(parts)
        if rest in ("", DEFAULT_MAIN_KEY, self.main_key):
            return self.main_session_key(owner)
        key = f"agent:{owner}:{rest}"
        if len(key) > MAX_KEY_LENGTH:
            raise InvalidSessionKey(
                f"invalid session key: longer than {MAX_KEY_LENGTH} characters ({len(key)})"
            )
        return key

    def resolve_input(self, raw: str, requester_agent_id: str) -> str:
        """A tool's `sessionKey` → store key; `main` and bare keys belong to the requester."""
        return self.canonical(raw, requester_agent_id)

    def display(self, key: str, requester_agent_id: str) -> str:
        """How a tool shows `key`: the requester's own main session is `"main"` (R1.3)."""
        try:
            own_main = self.canonical(key, requester_agent_id) == self.main_session_key(
                requester_agent_id
            )
        except InvalidSessionKey:
            return key
        return "main" if own_main else key

    def agent_of(self, key: str) -> str:
        """Owning agent; unlike `agent_id_of`, bare keys belong to the configured default."""
        parsed = parse_agent_key(key)
        return parsed.agent_id if parsed else self.default_agent_id

    def kind(self, key: str) -> SessionKind:
        """D1 / R1.5 classification on the rest after `agent:<id>:`; bare keys work too."""
        parts = _segments(_clean(key))
        if len(parts) == 1 and parts[0] in RESERVED_KEYS:
            return "main" if parts[0] == "global" and self.scope == "global" else "other"
        if len(parts) == 2 and parts[0] == "agent":
            return "main"
        rest = _rest_of(":".join(parts))
        if rest in (DEFAULT_MAIN_KEY, self.main_key):
            return "main"
        if rest.startswith("cron:"):
            return "cron"
        if rest.startswith("hook:"):
            return "hook"
        if rest.startswith(("node-", "node:")):
            return "node"
        if _is_group_rest(rest):
            return "group"
        return "other"

    def channel_of(self, key: str) -> str | None:
        """The `<ch>` of `<ch>:group|channel:<id>`, `<ch>:dm:<peer>` and `<ch>:<acct>:dm:<peer>`."""
        if self.kind(key) not in ("group", "other") or is_subagent_key(key):
            return None
        parts = _segments(_rest_of(key))
        if len(parts) >= 3 and parts[1] in ("group", "channel", "dm"):
            return normalize_channel(parts[0])
        if len(parts) >= 4 and parts[2] == "dm":
            return normalize_channel(parts[0])
        return None

    def _peer(self, channel: str, peer_id: str) -> str:
        linked = self._links.get(f"{channel}:{peer_id}") or self._links.get(peer_id)
        return _id_segment(linked or peer_id)

    def inbound_key(
        self,
        agent_id: str | None,
        channel: str,
        chat_type: Literal["direct", "group", "channel"],
        chat_id: str,
        account_id: str | None = None,
        thread_id: str | int | None = None,
        *,
        topic: bool = False,
        owner: bool = True,
        person: str | None = None,
    ) -> str:
        """The session of a message from a chat: a main-session channel's (the web chat, D17)
        is the agent's main session; a direct chat follows dmScope (with `:thread:<id>` where
        the channel's DM threads are sessions, D77), except that a non-`owner`'s DM never
        lands in the main session (D62) and a linked `person` under `per-peer` has one (D65);
        a group has its own."""
        traits = self.channels.get(channel)
        if traits is not None and traits.main_session:
            return self.main_session_key(agent_id)
        if chat_type == "direct":
            key = self.dm_key(agent_id, channel, chat_id, account_id, owner=owner, person=person)
            thread = _id_segment(thread_id, "") if traits is not None and traits.dm_threads else ""
            return f"{key}:thread:{thread}" if thread else key  # a thread of its own (D77)
        return self.group_key(agent_id, channel, chat_type, chat_id, thread_id, topic=topic)

    def announce_target(self, key: str | None) -> AnnounceTarget | None:
        """:func:`parse_announce_target` with the installed channels' traits (D94)."""
        return parse_announce_target(key, self.channels)

    def dm_key(
        self,
        agent_id: str | None,
        channel: str,
        peer_id: str,
        account_id: str | None = None,
        *,
        owner: bool = True,
        person: str | None = None,
    ) -> str:
        """A direct chat's session per `session.dmScope` and `identityLinks` (R1.1); under
        `main` only an `owner`'s DM is the main session, anyone else's is per-channel-peer
        (D62); a linked `person` (D65) is the peer under `per-peer`."""
        if self.dm_scope == "main" and owner:
            return self.main_session_key(agent_id)
        agent = self._agent(agent_id)
        ch = _id_segment(normalize_channel(channel))
        peer = self._peer(ch, _token(peer_id))
        if self.dm_scope == "per-peer":
            return f"agent:{agent}:dm:{_id_segment(person) if person else peer}"
        if self.dm_scope in ("per-channel-peer", "main"):
            return f"agent:{agent}:{ch}:dm:{peer}"
        return f"agent:{agent}:{ch}:{normalize_account_id(account_id)}:dm:{peer}"

    def group_key(
        self,
        agent_id: str | None,
        channel: str,
        chat_type: Literal["group", "channel"],
        chat_id: str,
        thread_id: str | int | None = None,
        *,
        topic: bool = False,
    ) -> str:
        """A group or room session, with a `:thread:`/`:topic:` suffix for threads (R1.1)."""
        if chat_type not in ("group", "channel"):
            raise InvalidSessionKey(f"chat_type must be group or channel, not {chat_type!r}")
        ch = _id_segment(normalize_channel(channel))
        key = f"agent:{self._agent(agent_id)}:{ch}:{chat_type}:{_id_segment(chat_id)}"
        thread = _id_segment(thread_id, "")
        if thread:
            key += f":{'topic' if topic else 'thread'}:{thread}"
        return key

    def subagent_key(self, agent_id: str | None) -> str:
        """A fresh child session for `sessions_spawn` (uuid4)."""
        return f"agent:{self._agent(agent_id)}:subagent:{uuid.uuid4()}"

    def cron_key(self, agent_id: str | None, job_id: str) -> str:
        return f"agent:{self._agent(agent_id)}:cron:{_required(job_id, 'job_id')}"

    def hook_key(self, agent_id: str | None, hook_id: str | None = None) -> str:
        """`hook:<uuid>` unless the hook names its own id."""
        hook = _token(hook_id, "") or str(uuid.uuid4())
        return f"agent:{self._agent(agent_id)}:hook:{hook}"

    def node_key(self, agent_id: str | None, node_id: str) -> str:
        return f"agent:{self._agent(agent_id)}:node-{_required(node_id, 'node_id')}"


def _required(value: str, name: str) -> str:
    token = _token(value, "")
    if not token:
        raise InvalidSessionKey(f"{name} required")
    return token
