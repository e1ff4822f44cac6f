"""The `sessions_list` row of a stored session (reference [2.1] fields, camelCase)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.outbound.gate import session_target
from core.store import SessionEntry, TranscriptMessage

if TYPE_CHECKING:
    from core.runtime import Runtime

_INTERNAL_KINDS = frozenset({"cron", "hook", "node"})


def derive_channel(rt: Runtime, entry: SessionEntry, kind: str) -> str:
    if kind in _INTERNAL_KINDS:
        return "internal"
    return (entry.channel or entry.last_channel or rt.keys.channel_of(entry.key)
            or "unknown")


def session_row(rt: Runtime, entry: SessionEntry, requester_agent: str,
                messages: list[TranscriptMessage] | None = None) -> dict[str, Any]:
    kind = entry.kind
    ctx = session_target(entry)
    row: dict[str, Any] = {
        "key": rt.keys.display(entry.key, requester_agent),
        "kind": kind,
        "channel": derive_channel(rt, entry, kind),
        "label": entry.label,
        "displayName": entry.display_name or entry.label,
        "updatedAt": entry.updated_at,
        "sessionId": entry.session_id,
        "model": entry.model,
        "contextTokens": entry.context_tokens,
        "totalTokens": entry.total_tokens if entry.total_tokens is not None else
        (entry.input_tokens or 0) + (entry.output_tokens or 0),
        "thinkingLevel": entry.thinking_level,
        "verboseLevel": entry.verbose_level,
        "systemSent": entry.system_sent,
        "abortedLastRun": entry.aborted_last_run,
        "sendPolicy": entry.send_policy,
        "spawnedBy": entry.spawned_by,
        "transcriptPath": str(rt.store.transcript_path(entry.session_id)),
    }
    if ctx is not None:
        dc = {"channel": ctx.channel, "to": ctx.to, "accountId": ctx.account_id}
        row["deliveryContext"] = {k: v for k, v in dc.items() if v is not None}
        row["lastChannel"], row["lastTo"], row["lastAccountId"] = ctx.channel, ctx.to, \
            ctx.account_id
    if messages is not None:
        row["messages"] = [m.to_wire() for m in messages]
    return {k: v for k, v in row.items() if v is not None}
