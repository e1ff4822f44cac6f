"""`KeyModel`: the session-key rules bound to `session.*` config (D1); apart from the pure
key functions of `core.model.keys` it builds on, so each module stays small."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Literal

from core.model.delivery_context import normalize_channel
from core.model.keys import (
    DEFAULT_AGENT_ID,
    DEFAULT_MAIN_KEY,
    MAX_KEY_LENGTH,
    RESERVED_KEYS,
    SURROGATE,
    AnnounceTarget,
    DmScope,
    InvalidSessionKey,
    Scope,
    SessionKind,
    clean_key,
    is_group_rest,
    is_subagent_key,
    key_segments,
    normalize_account_id,
    normalize_agent_id,
    normalize_main_key,
    parse_agent_key,
    parse_announce_target,
    rest_of,
)

if TYPE_CHECKING:
    from core.model.channel import ChannelTraits


def _token(value: str | int | None, fallback: str = "unknown") -> str:
    """One key segment: trimmed, lowercased; blank → `unknown` so the key still parses."""
    return clean_key("" if value is None else str(value)) or fallback


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
            person = clean_key(name)
            if not person:
                continue
            for peer in ids:
                self._links.setdefault(clean_key(peer), person)

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
        parts = key_segments(clean_key(raw))
        if not parts:
            raise InvalidSessionKey(f"invalid session key: {raw[:80]!r}")
        if SURROGATE.search(raw):  # undecodable bytes of a header or path (D12)
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
        parts = key_segments(clean_key(key))
        if len(parts) == 1 and parts[0] in RESERVED_KEYS:
            return "main" if parts[0] == "global" and self.scope == "global" else "other"
        if len(parts) == 2 and parts[0] == "agent":
            return "main"
        rest = rest_of(":".join(parts))
        if rest in (DEFAULT_MAIN_KEY, self.main_key):
            return "main"
        if rest.startswith("cron:"):
            return "cron"
        if rest.startswith("hook:"):
            return "hook"
        if rest.startswith(("node-", "node:")):
            return "node"
        if is_group_rest(rest):
            return "group"
        return "other"

    def channel_of(self, key: str) -> str | None:
        """The `<ch>` of `<ch>:group|channel:<id>`, `<ch>:dm:<peer>` and `<ch>:<acct>:dm:<peer>`."""
        if self.kind(key) not in ("group", "other") or is_subagent_key(key):
            return None
        parts = key_segments(rest_of(key))
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
