"""The `sessions_list` row of a stored session (reference R2.1 fields, camelCase).

Rows are built from already-normalised store fields with plain dict work: this runs for every
listed session, so it avoids model validation and key re-parsing (the list budget is 2 ms).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.store import SessionEntry, TranscriptMessage
from core.tools.results import DeliveryTarget, SessionRow

if TYPE_CHECKING:
    from core.tools.env import ToolEnv

_INTERNAL_KINDS = frozenset({"cron", "hook", "node"})


def derive_channel(env: ToolEnv, entry: SessionEntry, kind: str) -> str:
    if kind in _INTERNAL_KINDS:
        return "internal"
    return (entry.channel or entry.last_channel or env.keys.channel_of(entry.key)
            or "unknown")


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

    def model(self, entry: SessionEntry, messages: list[TranscriptMessage] | None = None
              ) -> SessionRow:
        kind = entry.kind
        last_channel = entry.last_channel or entry.channel
        delivery = DeliveryTarget(channel=last_channel, to=entry.last_to,
                                  account_id=entry.last_account_id) \
            if last_channel or entry.last_to or entry.last_account_id else None
        return SessionRow(
            key=self.display(entry.key), kind=kind,
            channel=derive_channel(self._env, entry, kind), label=entry.label,
            display_name=entry.display_name or entry.label, updated_at=entry.updated_at,
            session_id=entry.session_id, model=entry.model,
            context_tokens=entry.context_tokens,
            total_tokens=entry.total_tokens if entry.total_tokens is not None else
            (entry.input_tokens or 0) + (entry.output_tokens or 0),
            cost_usd=entry.cost_usd, thinking_level=entry.thinking_level,
            verbose_level=entry.verbose_level, system_sent=entry.system_sent,
            aborted_last_run=entry.aborted_last_run, send_policy=entry.send_policy,
            spawned_by=entry.spawned_by,
            transcript_path=f"{self._transcripts}/{entry.session_id}.jsonl",
            last_channel=last_channel, last_to=entry.last_to,
            last_account_id=entry.last_account_id, delivery_context=delivery,
            messages=None if messages is None else [m.to_wire() for m in messages])

    def row(self, entry: SessionEntry, messages: list[TranscriptMessage] | None = None
            ) -> dict[str, Any]:
        """The row as JSON (`GET /sessions/{key}` adds to it)."""
        return self.model(entry, messages).payload()


def session_row(env: ToolEnv, entry: SessionEntry, requester_agent: str,
                messages: list[TranscriptMessage] | None = None) -> dict[str, Any]:
    return RowBuilder(env, requester_agent).row(entry, messages)
