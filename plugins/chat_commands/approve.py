"""`/approve ID` and `/deny ID`: an owner decides a tool call that waits (D72).

The native buttons under an approval request send the same commands, so a press and a typed
command are one path: owner-only (D11), counted once (D16), the first decision wins.
"""

from __future__ import annotations

from core.api.plugins import OWNER, CommandInvocation, CommandSpec


def _who(inv: CommandInvocation) -> str:
    msg = inv.message
    return msg.sender_name or msg.sender_id


async def _decide(inv: CommandInvocation, verdict: str) -> str:
    words = inv.command.args.split()
    name = "approve" if verdict == "approved" else "deny"
    if len(words) != 1:
        return f"⚙️ Usage: /{name} ID"
    result = await inv.env.approvals.decide(
        words[0],
        "approved" if verdict == "approved" else "denied",
        by=_who(inv),
    )
    if result.approval is None:
        return f"⚙️ {result.error}"
    word = "Approved" if verdict == "approved" else "Denied"
    return f"🛡️ {word} by {result.approval.decided_by}: {result.approval.tool}"


async def handle_approve(inv: CommandInvocation) -> str:
    return await _decide(inv, "approved")


async def handle_deny(inv: CommandInvocation) -> str:
    return await _decide(inv, "denied")


SPECS = (
    CommandSpec(
        name="approve",
        description="Let a tool call that waits for you run: /approve ID",
        handler=handle_approve,
        permission=OWNER,
        usage="⚙️ Usage: /approve ID",
    ),
    CommandSpec(
        name="deny",
        description="Refuse a tool call that waits for you: /deny ID",
        handler=handle_deny,
        permission=OWNER,
        usage="⚙️ Usage: /deny ID",
    ),
)
