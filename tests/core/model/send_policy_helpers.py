"""What the send-policy tests share: two Discord session keys, `resolve_send_policy` with every
input optional, and a spec built from rules."""

from __future__ import annotations

from typing import Any

from core.model.send_policy import PolicyDecision, SendPolicySpec, SendRule, resolve_send_policy

DISCORD_GROUP = "agent:main:discord:group:dev"
DISCORD_CHANNEL = "agent:main:discord:channel:general"


def resolve(
    spec: SendPolicySpec | None,
    *,
    override: str | None = None,
    session_key: str | None = None,
    channel: str | None = None,
    chat_type: str | None = None,
) -> PolicyDecision:
    return resolve_send_policy(
        spec,
        override=override,
        session_key=session_key,
        channel=channel,
        chat_type=chat_type,
    )


def spec(*rules: SendRule, default: Any = None) -> SendPolicySpec:
    return SendPolicySpec(default=default, rules=rules)
