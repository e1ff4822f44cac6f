"""The usage lines of `/status` (which model answered the last run and what it cost), and
`/usage` with the sender's limits (D64)."""

from __future__ import annotations

from core.api.plugins import CommandInvocation, CommandSpec, person_key
from core.api.sessions import RunRecord, SessionEntry


def usd(value: float) -> str:
    return f"${value:.4f}" if value < 1 else f"${value:.2f}"


def usage_lines(entry: SessionEntry, last: RunRecord | None) -> list[str]:
    meta = (last.meta or {}) if last else {}
    lines = []
    if meta.get("model"):
        lines.append(f"Answered by: {meta['model']}")
    run_cost = meta.get("costUsd")
    if entry.cost_usd is not None:
        lines.append(
            f"Cost: {usd(entry.cost_usd)} this session"
            + (f" (last run {usd(float(run_cost))})" if run_cost is not None else "")
        )
    return lines


async def handle_usage(inv: CommandInvocation) -> str:
    """`/usage`: this session's tokens and cost, then one line per limit set for the sender
    (D64), `<limit>: <used>/<max>`."""
    env, entry, msg = inv.env, inv.entry, inv.message
    last = await env.store.last_run(entry.key)
    lines = [f"⚙️ Usage: {entry.total_tokens or 0} tokens this session"]
    lines += usage_lines(entry, last)
    who = person_key(msg.sender_key, inv.person_id)
    subjects = env.limits.subjects(inv.sender_role, who, entry.agent_id, entry.key)
    lines += await env.limits.usage_lines(subjects)
    return "\n".join(lines)


SPEC = CommandSpec(
    name="usage",
    description="Show this session's usage and your limits",
    handler=handle_usage,
)
