"""Send-policy resolution (R5.2, D5): pure functions over immutable values.

One function decides whether a session may be sent to, and says why, so the outbound gate,
the delivery log and the ``/send`` status reply (D4) all agree on the same answer.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, cast

from core.model.keys import route_of_key

__all__ = [
    "Action",
    "ChatType",
    "DecisionSource",
    "PolicyDecision",
    "SendPolicySpec",
    "SendRule",
    "effective_policy_text",
    "normalize_chat_type",
    "resolve_send_policy",
]

Action: TypeAlias = Literal["allow", "deny"]
ChatType: TypeAlias = Literal["direct", "group", "channel"]
DecisionSource: TypeAlias = Literal["session", "rule", "default", "implicit"]

_ACTIONS: frozenset[str] = frozenset({"allow", "deny"})
_CHAT_TYPES: dict[str, ChatType] = {
    "direct": "direct",
    "dm": "direct",
    "group": "group",
    "channel": "channel",
}
_MATCH_KEYS: dict[str, str] = {
    "channel": "channel",
    "provider": "provider",
    "chatType": "chat_type",
    "chat_type": "chat_type",
    "keyPrefix": "key_prefix",
    "key_prefix": "key_prefix",
}


def _clean(value: str | None) -> str | None:
    """Trim and lowercase; blank means "not set", as in the reference's match helpers."""
    if value is None:
        return None
    cleaned = value.strip().lower()
    return cleaned or None


def normalize_chat_type(value: str | None) -> ChatType | None:
    """``dm`` and ``direct`` are one chat type; unknown values count as unset (R5.2 step 4)."""
    cleaned = _clean(value)
    return None if cleaned is None else _CHAT_TYPES.get(cleaned)


def _normalize_action(value: str | None) -> Action | None:
    cleaned = _clean(value)
    return cast(Action, cleaned) if cleaned in _ACTIONS else None


@dataclass(frozen=True, slots=True)
class SendRule:
    """One configured rule; ``None`` fields match anything. Values are stored normalised."""

    action: Action
    channel: str | None = None
    chat_type: ChatType | None = None
    key_prefix: str | None = None

    def __post_init__(self) -> None:
        action = _normalize_action(self.action)
        if action is None:
            raise ValueError(f"invalid send-policy action: {self.action!r} (use allow|deny)")
        chat_type = None
        if _clean(self.chat_type) is not None:
            chat_type = normalize_chat_type(self.chat_type)
            if chat_type is None:
                raise ValueError(
                    f"invalid send-policy chatType: {self.chat_type!r} (use direct|group|channel)"
                )
        object.__setattr__(self, "action", action)
        object.__setattr__(self, "channel", _clean(self.channel))
        object.__setattr__(self, "chat_type", chat_type)
        object.__setattr__(self, "key_prefix", _clean(self.key_prefix))

    def describe(self) -> str:
        """Human summary of the match, e.g. ``channel=discord, chatType=group``."""
        parts = [
            f"{name}={value}"
            for name, value in (
                ("channel", self.channel),
                ("chatType", self.chat_type),
                ("keyPrefix", self.key_prefix),
            )
            if value is not None
        ]
        return ", ".join(parts) if parts else "any session"

    def matches(
        self,
        *,
        session_key: str | None,
        channel: str | None,
        chat_type: ChatType | None,
    ) -> bool:
        """True when every set field agrees with the (already normalised) session facts."""
        if self.channel is not None and self.channel != channel:
            return False
        if self.chat_type is not None and self.chat_type != chat_type:
            return False
        return self.key_prefix is None or (
            session_key is not None and session_key.startswith(self.key_prefix)
        )


@dataclass(frozen=True, slots=True)
class SendPolicySpec:
    """``session.sendPolicy`` as an immutable value, independent of the config classes."""

    default: Action | None = None
    rules: tuple[SendRule, ...] = ()

    def __post_init__(self) -> None:
        default = None
        if _clean(self.default) is not None:
            default = _normalize_action(self.default)
            if default is None:
                raise ValueError(f"invalid send-policy default: {self.default!r} (use allow|deny)")
        object.__setattr__(self, "default", default)
        object.__setattr__(self, "rules", tuple(self.rules))

    @property
    def is_empty(self) -> bool:
        """No default and no rules: behaves exactly like having no policy."""
        return self.default is None and not self.rules

    @classmethod
    def from_config(cls, obj: Any) -> SendPolicySpec:
        """Build from the config model (duck-typed) or a raw camelCase dict; ``None`` is empty.

        Invalid values raise ``ValueError`` rather than widening a rule, because a misspelt
        match field would otherwise make a deny rule match every session.
        """
        if obj is None:
            return cls()
        if isinstance(obj, SendPolicySpec):
            return obj
        default = _field(obj, "default")
        raw_rules = _field(obj, "rules") or ()
        if not isinstance(raw_rules, Iterable) or isinstance(raw_rules, str | bytes | Mapping):
            raise ValueError("send-policy rules must be a list")
        return cls(
            default=cast(Action | None, _text(default)),
            rules=tuple(_rule_from_config(raw) for raw in raw_rules),
        )


def _field(obj: Any, name: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def _text(value: Any) -> str | None:
    """Config values may be plain strings or enums; anything else is a config error."""
    if value is None:
        return None
    if isinstance(value, enum.Enum):
        value = value.value
    if not isinstance(value, str):
        raise ValueError(f"expected a string in send policy, got {value!r}")
    return value


def _rule_from_config(raw: Any) -> SendRule:
    action = _text(_field(raw, "action"))
    match = _field(raw, "match")
    channel = chat_type = key_prefix = provider = None
    if isinstance(match, Mapping):
        unknown = sorted(str(key) for key in match if key not in _MATCH_KEYS)
        if unknown:
            raise ValueError(f"unknown send-policy match keys: {', '.join(unknown)}")
        values = {_MATCH_KEYS[key]: _text(value) for key, value in match.items()}
        channel = values.get("channel")
        provider = values.get("provider")
        chat_type = values.get("chat_type")
        key_prefix = values.get("key_prefix")
    elif match is not None:
        channel = _text(getattr(match, "channel", None))
        provider = _text(getattr(match, "provider", None))
        chat_type = _text(getattr(match, "chat_type", None))
        key_prefix = _text(getattr(match, "key_prefix", None))
    if _clean(channel) is None:
        channel = provider
    elif _clean(provider) is not None and _clean(provider) != _clean(channel):
        raise ValueError(
            f"send-policy match.provider ({provider!r}) and match.channel ({channel!r}) "
            "disagree; provider is the legacy name of channel"
        )
    return SendRule(
        action=cast(Action, action if _clean(action) is not None else "allow"),
        channel=channel,
        chat_type=cast(ChatType | None, chat_type),
        key_prefix=key_prefix,
    )


@dataclass(frozen=True, slots=True)
class PolicyDecision:
    """The outcome and its provenance; ``reason`` goes into delivery logs and ``/send``."""

    action: Action
    source: DecisionSource
    rule_index: int | None
    reason: str

    @property
    def allowed(self) -> bool:
        return self.action == "allow"

    def to_wire(self) -> dict[str, str]:
        """As the HTTP API shows it: `allow|deny`, `/send`'s `on|off`, and what decided it."""
        return {
            "action": self.action,
            "state": "on" if self.allowed else "off",
            "source": self.source,
            "reason": self.reason,
            "text": effective_policy_text(self).removeprefix("⚙️ "),
        }


def resolve_send_policy(
    spec: SendPolicySpec | None,
    *,
    override: str | None,
    session_key: str | None,
    channel: str | None,
    chat_type: str | None,
) -> PolicyDecision:
    """Resolve with D5 precedence: override > any deny rule > any allow rule > default > allow.

    ``channel`` and ``chat_type`` are what the caller knows (explicit, else the entry's);
    missing ones are derived from ``session_key``.
    """
    override_action = _normalize_action(override)
    if override_action is not None:
        return PolicyDecision(override_action, "session", None, "session override")
    if spec is None or spec.is_empty:
        return PolicyDecision("allow", "implicit", None, "no policy configured")

    key = _clean(session_key)
    key_channel, key_chat_type = route_of_key(key)
    effective_channel = _clean(channel) or key_channel
    effective_chat_type = normalize_chat_type(chat_type) or key_chat_type

    first_allow: int | None = None
    for index, rule in enumerate(spec.rules, start=1):
        if not rule.matches(
            session_key=key, channel=effective_channel, chat_type=effective_chat_type
        ):
            continue
        if rule.action == "deny":
            return PolicyDecision("deny", "rule", index, f"rule {index}: {rule.describe()}")
        if first_allow is None:
            first_allow = index
    if first_allow is not None:
        rule = spec.rules[first_allow - 1]
        return PolicyDecision(
            "allow", "rule", first_allow, f"rule {first_allow}: {rule.describe()}"
        )
    if spec.default is not None:
        return PolicyDecision(spec.default, "default", None, "default")
    return PolicyDecision("allow", "implicit", None, "no matching rule")


def effective_policy_text(decision: PolicyDecision) -> str:
    """D4's ``/send`` status line, e.g. ``⚙️ Send policy: off (rule 1: channel=discord)``."""
    state = "on" if decision.allowed else "off"
    # nothing configured or no rule matched: the built-in default decided (D4 says "default");
    # the delivery log keeps the precise reason
    where = "default" if decision.source == "implicit" else decision.reason
    return f"⚙️ Send policy: {state} ({where})"
