"""A session reset (`/new` in a chat, `POST /api/sessions/{key}/reset` over HTTP): one code path.

The session keeps its key, route, label and send policy; its turns are stopped (on every
process, D27), and it gets a new transcript (a new session id) with its counters cleared and
the time of the reset (`reset_at`: the web chat's kept replies from before it are not shown, D137).
"""

from __future__ import annotations

import uuid
from typing import Protocol, Unpack

from core.engine.runs.manager import RunManager
from core.model.records import SessionEntry, SessionPatch
from core.store import now_ms


class SessionUpdates(Protocol):
    """What a reset needs of the store (the store, or a plugin's narrower view of it)."""

    async def update_session(
        self, key: str, *, touch: bool = True, **fields: Unpack[SessionPatch]
    ) -> SessionEntry: ...


async def reset_session(
    runs: RunManager, store: SessionUpdates, key: str, reason: str
) -> SessionEntry:
    """Stop the session's turns and start a new transcript; returns the updated entry."""
    await runs.abort_session(key, reason)
    return await store.update_session(
        key,
        session_id=str(uuid.uuid4()),
        input_tokens=None,
        output_tokens=None,
        total_tokens=None,
        context_tokens=None,
        cost_usd=None,
        aborted_last_run=None,
        reset_at=now_ms(),
    )
