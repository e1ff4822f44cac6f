"""`/pair list|approve CODE|deny CODE|revoke USER_ID`: the owner's pairing desk in chat (D11).

On a platform channel the command acts on that channel's requests; in the web chat (whose user
holds the gateway token, the gateway's owner) it acts on every channel.
"""

from __future__ import annotations

from core.api.plugins import OWNER, CommandInvocation, CommandSpec, guarded_channels

PAIR_USAGE = "⚙️ Usage: /pair list|approve CODE|deny CODE|revoke USER_ID"


def _scope(inv: CommandInvocation) -> str | None:
    """The channel the command acts on (None = all, from the web chat)."""
    channel = inv.message.channel
    return channel if channel in guarded_channels() else None


async def _list(inv: CommandInvocation, channel: str | None) -> str:
    pairing = inv.env.pairing
    pending = await pairing.pending(channel)
    approved = await pairing.approved(channel)
    lines = [f"⚙️ Pending pairing requests: {len(pending)}"]
    for r in pending:
        who = f"{r.user_id} ({r.user_name})" if r.user_name else r.user_id
        lines.append(f"{r.code} · {r.channel}/{r.account_id} · {who} · {r.preview[:60]!r}")
    if approved:
        lines.append(f"Approved: {', '.join(f'{a.user_id} on {a.channel}' for a in approved)}")
    return "\n".join(lines)


async def handle_pair(inv: CommandInvocation) -> str:
    words = inv.command.args.split()
    channel = _scope(inv)
    pairing = inv.env.pairing
    if words == ["list"] or not words:
        return await _list(inv, channel)
    if len(words) != 2:
        return PAIR_USAGE
    action, arg = words[0].lower(), words[1]
    if action in ("approve", "deny"):
        code = arg.upper()
        req = await (
            pairing.approve(code, channel) if action == "approve" else pairing.deny(code, channel)
        )
        if req is None:
            return f"⚙️ No pending pairing request with code {code}."
        verb = "Approved" if action == "approve" else "Denied"
        return f"⚙️ {verb} {req.user_id} on {req.channel}."
    if action == "revoke":
        channels = [channel] if channel else list(guarded_channels())
        revoked = [ch for ch in channels if await pairing.revoke(ch, arg)]
        if not revoked:
            return f"⚙️ {arg} is not approved on {channel or 'any channel'}."
        return "\n".join(f"⚙️ Revoked {arg} on {ch}." for ch in revoked)
    return PAIR_USAGE


SPEC = CommandSpec(
    name="pair",
    description="Pairing requests: /pair list|approve CODE|deny CODE|revoke USER_ID",
    handler=handle_pair,
    permission=OWNER,
    usage=PAIR_USAGE,
)
