"""What passes through the outbound gate: the message that wants to leave (`Outbound`), the
state the chain threads for it (`Attempt`) and the result (`DeliveryResult`); shared by the gate
and everything that sends through it, so it lives apart from the gate's chain."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

from core.model.approvals import Button
from core.model.channel import SendReceipt
from core.model.delivery_context import DeliveryContext
from core.model.media import MediaItem
from core.model.send_policy import PolicyDecision
from core.store import SessionEntry

__all__ = [
    "Attempt",
    "DeliveryKind",
    "DeliveryResult",
    "Middleware",
    "Next",
    "Outbound",
    "Outcome",
]

DeliveryKind = Literal[
    "reply", "announce", "tool_send", "command_reply", "notice", "cron", "hook", "approval"
]
Outcome = Literal[
    "delivered", "suppressed_by_policy", "failed", "rate_limited", "resent_after_crash"
]


@dataclass(slots=True)
class Outbound:
    """A message that wants to leave. `target=None` means the session's own last route."""

    text: str
    kind: DeliveryKind
    session_key: str | None
    target: DeliveryContext | None = None
    run_id: str | None = None
    owner_command: bool = False
    buttons: tuple[Button, ...] = ()
    """Native buttons under the last chunk (D72, D73); the text carries its own fallback."""
    media: list[MediaItem] = field(default_factory=list)
    """Items sent after the text, each as one chunk (D78); stored first if they have no id."""
    chat_type: str | None = None
    """The target chat's type (`group`, `direct`), for a target no session stands for yet (a
    pairing code): the configured `chatType` rules hold there (D140)."""

    def logged_text(self) -> str:
        """What the delivery log keeps: the text, and a line naming each item."""
        return "\n".join(x for x in [self.text, *(m.placeholder() for m in self.media)] if x)


@dataclass(slots=True)
class DeliveryResult:
    outcome: Outcome
    reason: str | None = None
    delivery_id: int | None = None
    attempts: int = 0
    receipts: list[SendReceipt] = field(default_factory=list)

    @property
    def delivered(self) -> bool:
        return self.outcome == "delivered"


@dataclass(slots=True)
class Attempt:
    """State threaded through the middleware chain for one outbound message."""

    message: Outbound
    entry: SessionEntry | None
    target: DeliveryContext | None
    decision: PolicyDecision | None = None
    attempts: int = 0
    note: str | None = None
    delivery_id: int | None = None  # the delivery row, written before the first send
    chunks: list[str] = field(default_factory=list)
    media: dict[int, MediaItem] = field(default_factory=dict)  # chunk index → item it sends
    receipts: dict[int, SendReceipt] = field(default_factory=dict)  # chunk index → receipt


Next = Callable[[], Awaitable[DeliveryResult]]
Middleware = Callable[[Attempt, Next], Awaitable[DeliveryResult]]
