"""The `sessions_list` row of a stored session (reference R2.1 fields, camelCase).

Rows are built from already-normalised store fields with plain dict work: this runs for every
listed session, so it avoids model validation and key re-parsing (the list budget is 2 ms).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.store import SessionEntry, TranscriptMessage

if TYPE_CHECKING:
    from core.features.tools.env import ToolEnv

_INTERNAL_KINDS = frozenset({"cron", "hook", "node"})


def derive_channel(env: ToolEnv, entry: SessionEntry, kind: str) -> str:
    if kind in _INTERNAL_KINDS:
        return "internal"
    return entry.channel or entry.last_channel or env.keys.channel_of(entry.key) or "unknown"


class RowBuilder:
    """Builds rows for one requester; precomputes what is the same for every row."""

    __slots__ = ("_env", "_main_keys", "_transcripts")

    def __init__(self, env: ToolEnv, requester_agent: str) -> None:
        self._env = env
        main = env.keys.main_session_key(requester_agent)
        self._main_keys = {main, "global"} if main == "global" else {main}
        self._transcripts = str(env.store.transcripts_dir)

    def display(self, key: str) -> str:
        return "main" if key in self._main_keys else key

    def row(
        self, entry: SessionEntry, messages: list[TranscriptMessage] | None = None
    ) -> dict[str, Any]:
        """The row as JSON, in the shape of :class:`core.features.tools.results.SessionRow` (D33).

        Built as a dict: validating 50 models would double sessions_list's time (bench);
        tests hold every row to the model instead."""
        kind = entry.kind
        last_channel = entry.last_channel or entry.channel
        row: dict[str, Any] = {
            "key": self.display(entry.key),
            "kind": kind,
            "channel": derive_channel(self._env, entry, kind),
            "label": entry.label,
            "displayName": entry.display_name or entry.label,
            "updatedAt": entry.updated_at,
            "sessionId": entry.session_id,
            "model": entry.model,
            "contextTokens": entry.context_tokens,
            "totalTokens": entry.total_tokens
            if entry.total_tokens is not None
            else (entry.input_tokens or 0) + (entry.output_tokens or 0),
            "costUsd": entry.cost_usd,
            "thinkingLevel": entry.thinking_level,
            "verboseLevel": entry.verbose_level,
            "systemSent": entry.system_sent,
            "abortedLastRun": entry.aborted_last_run,
            "sendPolicy": entry.send_policy,
            "spawnedBy": entry.spawned_by,
            "transcriptPath": f"{self._transcripts}/{entry.session_id}.jsonl",
            "lastChannel": last_channel,
            "lastTo": entry.last_to,
            "lastAccountId": entry.last_account_id,
        }
        if last_channel or entry.last_to or entry.last_account_id:
            dc = {"channel": last_channel, "to": entry.last_to, "accountId": entry.last_account_id}
            row["deliveryContext"] = {k: v for k, v in dc.items() if v is not None}
        if messages is not None:
            row["messages"] = [m.to_wire() for m in messages]
        return {k: v for k, v in row.items() if v is not None}


def session_row(
    env: ToolEnv,
    entry: SessionEntry,
    requester_agent: str,
    messages: list[TranscriptMessage] | None = None,
) -> dict[str, Any]:
    return RowBuilder(env, requester_agent).row(entry, messages)
