"""`/subagents list|stop|log|info|send|help`: the sub-agents spawned from this chat (R4.10).

Owner-only, like `/stop`: it can abort runs and read sub-agent transcripts. Targets are a list
number, `last`, a run-id prefix or the full child session key.
"""

from __future__ import annotations

import time

from core.api.plugins import OWNER, CommandInvocation, CommandSpec, SendBlocked, ToolContext
from core.api.sessions import (
    RunRequest,
    SubagentRecord,
    TranscriptMessage,
    agent_id_of,
    format_duration,
    now_ms,
    status_word,
    subagent_system_prompt,
)

NONE_TEXT = "🧭 Subagents: none for this session."
MISSING_ID = "Missing subagent id."
DEFAULT_LOG_LIMIT, MAX_LOG_LIMIT, LOG_LINE_MAX = 20, 200, 500
HELP = "\n".join(
    [
        "🧭 /subagents — sub-agents spawned from this chat",
        "/subagents list",
        "/subagents stop <id|#|all>",
        "/subagents log <id|#> [limit] [tools]",
        "/subagents info <id|#>",
        "/subagents send <id|#> <message>",
        "Targets: list number, last, a run id prefix, or the full session key.",
    ]
)


MIN_DIGIT_PREFIX = 4


def resolve_target(records: list[SubagentRecord], token: str) -> SubagentRecord | str:
    """The record named by `token`, or the error text to reply."""
    token = token.strip()
    if not token:
        return MISSING_ID
    if token.lower() == "last":
        return records[-1] if records else f"Unknown subagent id: {token}"
    if token.isdigit() and 1 <= int(token) <= len(records):
        return records[int(token) - 1]
    # a run id is hex, so its prefix can be all digits (≈6% of 6-character prefixes): a number
    # of 4+ digits that is no list index is tried as a run id prefix before it is refused
    prefixed = [r for r in records if r.run_id.startswith(token.lower())]
    if token.isdigit() and (len(token) < MIN_DIGIT_PREFIX or not prefixed):
        return f"Invalid subagent index: {token}"
    if ":" in token:
        key = token.lower()
        found = next((r for r in records if r.child_key == key), None)
        return found if found is not None else f"Unknown subagent session: {token}"
    matches = prefixed
    if len(matches) > 1:
        return f"Ambiguous run id prefix: {token}"
    return matches[0] if matches else f"Unknown subagent id: {token}"


def _name(rec: SubagentRecord) -> str:
    text = rec.label or " ".join(rec.task.split())
    return text if len(text) <= 40 else text[:39] + "…"


def _status(inv: CommandInvocation, rec: SubagentRecord) -> str:
    if rec.announce_state == "stopped":
        return "stopped"
    if rec.outcome is None:
        return "running" if inv.env.runs.is_active(rec.child_key) else "unknown"
    return status_word(rec.outcome)


def _runtime(rec: SubagentRecord) -> str:
    start = rec.started_at or rec.created_at
    return format_duration((rec.ended_at or now_ms()) - start)


def _iso(ms: int | None) -> str:
    if ms is None:
        return "—"
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(ms / 1000))


async def _list(inv: CommandInvocation, records: list[SubagentRecord]) -> str:
    if not records:
        return NONE_TEXT
    lines = [f"🧭 Subagents ({len(records)}):"]
    for i, rec in enumerate(records, 1):
        lines.append(
            f"{i}. {_name(rec)} — {_status(inv, rec)} · {_runtime(rec)} · run {rec.run_id[:8]}"
        )
    return "\n".join(lines)


async def _stop(inv: CommandInvocation, records: list[SubagentRecord], token: str) -> str:
    registry = inv.env.subagents
    if token.strip().lower() == "all":
        stopped = 0
        for rec in records:
            stopped += await registry.stop_run(rec)
        if not stopped:
            return "⚙️ No running sub-agents."
        return f"⚙️ Stopped {stopped} sub-agent{'' if stopped == 1 else 's'}."
    target = resolve_target(records, token)
    if isinstance(target, str):
        return target
    if not await registry.stop_run(target):
        return f"⚙️ Sub-agent {_name(target)} is not running."
    return f"⚙️ Stopped sub-agent {_name(target)}."


def _log_line(msg: TranscriptMessage) -> str:
    if msg.role == "toolResult":
        who = f"tool {msg.tool_name or ''}".rstrip()
    else:
        who = msg.role
    text = msg.plain_text() or " ".join(
        f"[{b.get('name')}]" for b in msg.content if b.get("type") == "toolCall"
    )
    text = " ".join(text.split())
    if len(text) > LOG_LINE_MAX:
        text = text[: LOG_LINE_MAX - 1] + "…"
    return f"{who}: {text}"


async def _log(inv: CommandInvocation, records: list[SubagentRecord], args: list[str]) -> str:
    target = resolve_target(records, args[0] if args else "")
    if isinstance(target, str):
        return target
    limit, tools = DEFAULT_LOG_LIMIT, False
    for arg in args[1:]:
        if arg.isdigit():
            limit = max(1, min(MAX_LOG_LIMIT, int(arg)))
        elif arg.lower() == "tools":
            tools = True
    env = inv.env
    entry = await env.store.get_session(target.child_key)
    if entry is None:
        return f"Unknown subagent session: {target.child_key}"
    msgs = await env.store.history(entry.session_id, limit=limit, include_tools=tools)
    if not msgs:
        return f"🧾 No messages yet for {_name(target)}."
    return "\n".join(
        [f"🧾 Log of {_name(target)} (last {len(msgs)}):", *(_log_line(m) for m in msgs)]
    )


async def _info(inv: CommandInvocation, records: list[SubagentRecord], token: str) -> str:
    target = resolve_target(records, token)
    if isinstance(target, str):
        return target
    env = inv.env
    entry = await env.store.get_session(target.child_key)
    lines = [
        f"ℹ️ Subagent {_name(target)}",
        f"Status: {_status(inv, target)}" + (f" ({target.error})" if target.error else ""),
        f"Task: {target.task}",
        f"Label: {target.label or '—'}",
        f"Run: {target.run_id}",
        f"Session: {target.child_key}",
        f"Session id: {entry.session_id if entry else '—'}",
        f"Model: {target.model or (entry.model if entry else None) or 'default'}",
        f"Created: {_iso(target.created_at)}",
        f"Ended: {_iso(target.ended_at)}",
        f"Runtime: {_runtime(target)}",
        f"Cleanup: {target.cleanup}",
        f"Archive at: {_iso(target.archive_at)}",
        f"Announce: {target.announce_state}",
    ]
    if entry is not None:
        lines.append(f"Transcript: {env.store.transcript_path(entry.session_id)}")
    return "\n".join(lines)


async def _send(inv: CommandInvocation, records: list[SubagentRecord], args: str) -> str:
    token, _, message = args.strip().partition(" ")
    target = resolve_target(records, token)
    if isinstance(target, str):
        return target
    if not message.strip():
        return "⚙️ Usage: /subagents send <id|#> <message>"
    env = inv.env
    if await env.store.get_session(target.child_key) is None:
        return f"Unknown subagent session: {target.child_key}"
    ctx = ToolContext(
        session_key=target.child_key,
        agent_id=agent_id_of(target.child_key),
        sandboxed=env.is_sandboxed(target.child_key),
        role=inv.sender_role,
        sender=inv.message.sender_key,  # its limits and rules (D63, D64, D149)
        person_id=inv.person_id,
        group_id=inv.message.group_key,
    )
    prompt = subagent_system_prompt(
        task=target.task,
        child_key=target.child_key,
        requester_key=target.requester_key,
        requester_channel=target.origin.channel if target.origin else None,
        label=target.label,
    )
    try:
        run = await env.start_run(
            RunRequest(
                session_key=target.child_key,
                message=message.strip(),
                context=ctx,
                deliver=False,
                lane="subagent",
                model=target.model,
                extra_system_prompt=prompt,
            )
        )
    except SendBlocked as exc:
        return f"⚠️ {exc}"
    return f"✅ Sent to {_name(target)} (run {run.id[:8]}). See /subagents log {token}."


async def handle_subagents(inv: CommandInvocation) -> str:
    action, _, rest = inv.command.args.strip().partition(" ")
    action = action.lower() or "list"
    if action == "help":
        return HELP
    records = await inv.env.subagents.runs_of(inv.entry.key)
    if action == "list":
        return await _list(inv, records)
    if action in ("stop", "kill"):
        return await _stop(inv, records, rest)
    if action == "log":
        return await _log(inv, records, rest.split())
    if action == "info":
        return await _info(inv, records, rest)
    if action == "send":
        return await _send(inv, records, rest)
    return HELP


SPEC = CommandSpec(
    name="subagents",
    description="List, stop, inspect or message this chat's sub-agents",
    handler=handle_subagents,
    permission=OWNER,
    usage="/subagents list|stop|log|info|send|help",
)
