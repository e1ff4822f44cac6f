"""The send policy of the chat a delivery lands in (D140), for the gate's policy step.

A delivery whose target is its session's own chat obeys that session (D5); any other (cron and
hook turns, announces, tool sends) also obeys every session whose replies go to the target chat,
and the configured rules for that chat when none does: a `/send off` or a deny rule there holds
whoever speaks. Automated sessions (cron, hook) never count as the chat: their route merely
points at it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from core.model.delivery_context import DeliveryContext, session_target
from core.model.send_policy import (
    PolicyDecision,
    SendPolicySpec,
    normalize_chat_type,
    resolve_send_policy,
)
from core.store import SessionEntry, Store

AUTOMATED = frozenset({"cron", "hook"})
"""Session kinds that speak into a chat without being it."""


@dataclass(frozen=True, slots=True)
class TargetOf:
    """Who speaks (`source_key`, its `entry`) and where (`target`: None, its own route)."""

    source_key: str | None
    target: DeliveryContext | None
    entry: SessionEntry | None
    chat_type: str | None = None
    """The target chat's type when its sender knows it (a group code to a group that has no
    session yet): a `chatType` rule holds there too."""


async def target_decision(
    store: Store,
    decide: Callable[[SessionEntry], PolicyDecision],
    policy: SendPolicySpec | None,
    of: TargetOf,
    decision: PolicyDecision,
) -> PolicyDecision:
    """`decision` (the source's), or the deny of the chat the delivery lands in."""
    target, entry = of.target, of.entry
    if not decision.allowed or target is None or not target.channel or not target.to:
        return decision
    if entry is not None and entry.kind not in AUTOMATED and _same_chat(entry, target):
        return decision  # a chat's reply to itself: no lookup on the turn path
    found = False
    at_route = await store.sessions_at_route(
        target.channel, target.to, target.account_id, skip_kinds=AUTOMATED
    )
    for other in at_route:
        if other.key == of.source_key:
            continue
        if not _same_thread(other.last_thread_id, target.thread_id):
            continue  # another topic of the same group is another chat
        found = True
        there = decide(other)
        if not there.allowed:
            return _at_target(there, other.key)
    if not found:
        there = resolve_send_policy(
            policy,
            override=None,
            session_key=None,
            channel=target.channel,
            chat_type=normalize_chat_type(of.chat_type),
        )
        if not there.allowed:
            return _at_target(there, f"{target.channel}:{target.to}")
    return decision


def _same_chat(entry: SessionEntry, target: DeliveryContext) -> bool:
    """The session's own route is the target (a thread id compares as text)."""
    own = session_target(entry)
    return (
        own is not None
        and (own.channel, own.to, own.account_id) == (target.channel, target.to, target.account_id)
        and _text(own.thread_id) == _text(target.thread_id)
    )


def _same_thread(session_thread: str | None, target_thread: str | int | None) -> bool:
    return session_thread is None or target_thread is None or session_thread == str(target_thread)


def _text(value: str | int | None) -> str | None:
    return None if value is None else str(value)


def _at_target(decision: PolicyDecision, where: str) -> PolicyDecision:
    """The target chat's deny, its reason naming that chat for the delivery log."""
    return PolicyDecision(
        decision.action, decision.source, decision.rule_index, f"target {where}: {decision.reason}"
    )
