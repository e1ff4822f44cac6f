"""`/whoami`: the sender's role as the runtime resolved it at admission (D60)."""

from __future__ import annotations

from core.api.plugins import CommandInvocation, CommandSpec


def whoami_text(role: str, channel: str, user_id: str, person_id: str | None = None) -> str:
    """D60's exact answer; ` Linked as <personId>.` when D65 linked the sender."""
    text = f"⚙️ You are {role} on {channel} ({user_id})."
    return f"{text} Linked as {person_id}." if person_id else text


async def handle_whoami(inv: CommandInvocation) -> str:
    msg = inv.message
    return whoami_text(inv.sender_role, msg.channel, msg.sender_id, inv.person_id)


SPEC = CommandSpec(
    name="whoami", description="Show your role here (owner, member or guest)", handler=handle_whoami
)
