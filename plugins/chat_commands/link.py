"""`/link`, `/link CODE` and `/unlink`: one person across channels (D65)."""

from __future__ import annotations

from core.api.plugins import CommandInvocation, CommandSpec


async def handle_link(inv: CommandInvocation) -> str | None:
    identities, msg = inv.env.identities, inv.message
    code = inv.command.args.strip()
    if code:
        return await identities.complete(msg, code)
    if msg.chat_type != "direct":
        return "⚙️ /link works in a direct chat with the bot."
    return await identities.start(msg)


async def handle_unlink(inv: CommandInvocation) -> str:
    msg = inv.message
    who = msg.sender_key
    if await inv.env.identities.unlink(msg.channel, msg.sender_id):
        return f"🔗 Unlinked {who}."
    return f"🔗 {who} is not linked."


SPECS = (
    CommandSpec(
        name="link",
        description="Link another of your accounts: /link, then /link CODE from it",
        handler=handle_link,
    ),
    CommandSpec(
        name="unlink",
        description="Take this account out of its linked person",
        handler=handle_unlink,
    ),
)
