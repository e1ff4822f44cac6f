"""Who is calling a tool: set by the gateway for each run, never by the model."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field, replace
from typing import Literal

from core.model.delivery_context import DeliveryContext
from core.model.roles import Role


@dataclass(frozen=True, slots=True)
class ToolContext:
    """The runtime's identity of the requester of a tool call.

    `session_key` is the requester's canonical key; `origin` is where the requester's chat
    lives (used to address announces); `trace_id`/`hops` bound chains of sends and spawns.
    """

    session_key: str
    agent_id: str
    origin: DeliveryContext | None = None
    sandboxed: bool = False
    via: Literal["agent", "http"] = "agent"
    run_id: str | None = None
    trace_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    hops: int = 0
    group_id: str | None = None
    """`<channel>:<groupId>` when the chain of runs started in a group (D63 `group:` rules)."""
    role: Role = "guest"
    """The requester's role (D60), set by the runtime; least privilege when nobody said."""
    sender: str | None = None
    """`<channel>:<userId>` of the platform user who started the chain of runs, when one did
    (carried to every run it starts, for D63 rules and D64 limits)."""
    person_id: str | None = None
    """That user's linked person (D65), when linked."""

    @property
    def owner(self) -> bool:
        """The turn was started by a channel owner (or the gateway token)."""
        return self.role == "owner"

    automated: bool = False
    """The turn (or the chain it belongs to) was started by a cron job or a webhook (D81)."""

    @property
    def channel(self) -> str | None:
        return self.origin.channel if self.origin else None

    def for_run(self, run_id: str) -> ToolContext:
        return replace(self, run_id=run_id)

    def next_hop(
        self, session_key: str, agent_id: str, *, origin: DeliveryContext | None, sandboxed: bool
    ) -> ToolContext:
        """The context of a run started by this one (same trace, one more hop)."""
        return replace(
            self,
            session_key=session_key,
            agent_id=agent_id,
            origin=origin,
            sandboxed=sandboxed,
            via="agent",
            run_id=None,
            hops=self.hops + 1,
        )
