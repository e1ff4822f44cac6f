"""`/status`, `/new`, `/compact` and `/stop`: look at, reset, compact and interrupt the current
session."""

from __future__ import annotations

from core.api.plugins import OWNER, CommandInvocation, CommandSpec
from core.api.sessions import compact_now, effective_policy_text, now_ms, reset_session
from plugins.chat_commands.usage import usage_lines


async def handle_status(inv: CommandInvocation) -> str:
    env, entry = inv.env, inv.entry
    policy = effective_policy_text(env.gate.decide(entry)).removeprefix("⚙️ ")
    last = await env.store.last_run(entry.key)
    model = entry.model or env.models.default_ref(entry.agent_id) or "none configured"
    lines = [
        f"⚙️ Session: {entry.key}",
        f"Model: {model}",
        policy,
        f"Tokens: {entry.total_tokens or 0} total (last turn in {entry.input_tokens or 0} / "
        f"out {entry.output_tokens or 0})",
        f"Last run: {last.status if last else 'none'}"
        + (f" ({last.error})" if last and last.error else ""),
    ]
    lines += usage_lines(entry, last)
    lines += await activity_lines(inv)
    return "\n".join(lines)


async def activity_lines(inv: CommandInvocation) -> list[str]:
    """What `session_status` says too (D67): running or idle, queued turns, route, sub-agents."""
    entry = inv.entry
    act = await inv.env.store.session_activity(entry.key)
    lines = [f"Status: {'running' if act.running else 'idle'}, {act.queued} queued"]
    if entry.last_channel and entry.last_to:
        lines.append(f"Route: {entry.last_channel} → {entry.last_to}")
    lines.append(f"Sub-agents: {act.subagents_running} running, {act.subagents_total} in all")
    return lines


async def handle_new(inv: CommandInvocation) -> str:
    env = inv.env
    entry = await reset_session(env.runs, env.store, inv.entry.key, "session reset by /new")
    return f"⚙️ New session started ({entry.session_id[:8]}). Send policy kept."


async def handle_stop(inv: CommandInvocation) -> str:
    env = inv.env
    stopped = await env.runs.abort_session(inv.entry.key)
    children = await env.subagents.stop_of(inv.entry.key)
    if not stopped and not children:
        return "⚙️ Nothing to stop."
    if children:
        noun = "sub-agent" if children == 1 else "sub-agents"
        return f"⚙️ Agent was aborted. Stopped {children} {noun}."
    return "⚙️ Agent was aborted."


async def handle_compact(inv: CommandInvocation) -> str:
    """D71: summarise now what a turn would summarise when its context grows too long."""
    n = await compact_now(inv.env, inv.entry, now_ms())
    return f"🗜️ Compacted {n} messages."


SPECS = (
    CommandSpec(
        name="status",
        description="Show this session's key, model, policy and usage",
        handler=handle_status,
    ),
    CommandSpec(
        name="new",
        description="Start a fresh conversation in this chat",
        handler=handle_new,
        permission=OWNER,
    ),
    CommandSpec(
        name="compact",
        description="Summarise the older messages of this conversation now",
        handler=handle_compact,
    ),
    CommandSpec(
        name="stop",
        description="Abort the running agent turn and its sub-agents",
        handler=handle_stop,
        permission=OWNER,
    ),
)
