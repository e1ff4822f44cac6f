"""The services every extension point builds on: a typed sessions façade over the runtime's parts.

:class:`Services` is the protocol the sub-agent registry, the cron service and the router take
instead of the whole runtime; :class:`PluginServices` is its narrower base, which the tool and
command environments (core.features.tools.env, core.features.commands.context) extend: it types the
store as :class:`SessionStore`, the sessions and transcripts a feature reads and edits, not the
delivery ledger or the run tables (D49). :class:`CoreServices` is the concrete one the composition
root (core.runtime) builds; the same objects satisfy both protocols. The runtime hands these
objects, never itself (D30, D97).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, Unpack

from core.engine.run_env import RunEnv
from core.model.delivery_context import DeliveryContext, session_target
from core.model.errors import SendBlocked
from core.model.key_model import KeyModel
from core.model.keys import agent_id_of
from core.model.media import MediaItem
from core.model.records import SessionPatch
from core.model.roles import Role
from core.model.tool_context import ToolContext

if TYPE_CHECKING:
    from core.config import CrosstalkConfig
    from core.engine.background import BackgroundTasks
    from core.engine.outbound.gate import OutboundGate
    from core.engine.runs import RunManager, RunRequest
    from core.features.models.resolver import ModelResolver
    from core.model.records import DeliveryOrigin, KeptDelivery
    from core.model.search import SearchHit, SearchQuery
    from core.store import RunRecord, SessionEntry, SessionQuery, Store, TranscriptMessage
    from core.store.activity import SessionActivity


class SessionStore(Protocol):
    """The store as a plugin sees it: sessions, their transcripts, a session's last run (D49).

    :class:`core.store.Store` satisfies it; only the arguments features pass are declared."""

    transcripts_dir: Path

    def transcript_path(self, session_id: str) -> Path: ...
    async def get_session(self, key: str) -> SessionEntry | None: ...
    async def list_sessions(self, query: SessionQuery) -> list[SessionEntry]: ...
    async def find_sessions(
        self, text: str, *, spawned_by: str | None = None, limit: int = 8
    ) -> list[SessionEntry]: ...
    async def session_tree(self, root: str, *, max_sessions: int = 10_000) -> list[str]: ...
    async def find_by_label(
        self,
        label: str,
        *,
        agent_id: str | None = None,
        spawned_by: str | None = None,
        limit: int = 2,
    ) -> list[SessionEntry]: ...
    async def update_session(
        self, key: str, *, touch: bool = True, **fields: Unpack[SessionPatch]
    ) -> SessionEntry: ...
    async def set_label(self, key: str, label: str | None) -> SessionEntry: ...
    async def delete_session(self, key: str) -> bool: ...
    async def history(
        self,
        session_id: str,
        *,
        limit: int | None = None,
        include_tools: bool = True,
        include_summaries: bool = False,
        run_id: str | None = None,
    ) -> list[TranscriptMessage]: ...
    async def recent_messages(
        self, session_ids: Iterable[str], per_session: int
    ) -> dict[str, list[TranscriptMessage]]: ...
    async def last_run(self, session_key: str) -> RunRecord | None: ...
    async def run_outcomes(self, run_ids: Sequence[str]) -> dict[str, tuple[str, str | None]]: ...
    async def save_media(
        self, items: Sequence[MediaItem], *, run_id: str | None, session_key: str | None
    ) -> list[MediaItem]: ...
    async def media_by_id(self, ids: Sequence[str]) -> dict[str, MediaItem]: ...
    async def delivery_origin(self, delivery_id: int) -> DeliveryOrigin | None: ...
    async def kept_for(
        self, channel: str, to: str, kinds: Sequence[str], limit: int = 50, since: int = 0
    ) -> list[KeptDelivery]: ...
    async def session_activity(self, session_key: str) -> SessionActivity: ...
    async def latest_summary(self, session_id: str) -> TranscriptMessage | None: ...
    async def placed_after(
        self, session_id: str, after_seq: int, limit: int
    ) -> list[TranscriptMessage]: ...
    async def append_messages(
        self,
        entry: SessionEntry,
        messages: Sequence[TranscriptMessage],
        *,
        touch: bool = True,
        queued: bool = False,
        **session_fields: Unpack[SessionPatch],
    ) -> list[int]: ...
    async def search_messages(
        self,
        terms: SearchQuery,
        scope: SessionQuery,
        *,
        limit: int,
        session_key: str | None = None,
    ) -> list[SearchHit]: ...
    async def message_window(
        self,
        session_key: str,
        message_id: int,
        limit: int,
        *,
        include_tools: bool = False,
        roles_out: tuple[str, ...] = (),
    ) -> list[TranscriptMessage] | None: ...


class PluginServices(RunEnv, Protocol):
    """What a tool or command may use: config, keys, sessions, outbound delivery, runs, models."""

    @property
    def config(self) -> CrosstalkConfig: ...
    @property
    def keys(self) -> KeyModel: ...
    @property
    def store(self) -> SessionStore: ...
    @property
    def models(self) -> ModelResolver: ...

    def is_sandboxed(self, session_key: str) -> bool: ...
    async def ensure_session(self, key: str, **fields: Unpack[SessionPatch]) -> SessionEntry: ...
    async def start_run(
        self,
        request: RunRequest,
        *,
        check_policy: bool = True,
        entry: SessionEntry | None = None,
    ) -> RunRecord: ...


class Services(PluginServices, Protocol):
    """What core features (sub-agent registry, cron service, router) use: the whole store."""

    @property
    def store(self) -> Store: ...


@dataclass(frozen=True, slots=True)
class CoreServices:
    """The concrete :class:`Services`: explicit collaborators, no lifecycle of their own."""

    config: CrosstalkConfig
    keys: KeyModel
    store: Store
    gate: OutboundGate
    runs: RunManager
    models: ModelResolver
    background: BackgroundTasks

    def spawn(self, coro: Awaitable[object]) -> asyncio.Task[object]:
        """Run a background job whose failure is logged, never lost."""
        return self.background.spawn(coro)

    def is_sandboxed(self, session_key: str) -> bool:
        mode = self.config.agents.defaults.sandbox.mode
        if mode == "all":
            return True
        if mode == "non-main":
            return self.keys.kind(session_key) != "main"
        return False

    def context_for(
        self,
        entry: SessionEntry,
        *,
        via: str = "agent",
        origin: DeliveryContext | None = None,
        role: Role = "owner",
    ) -> ToolContext:
        """The tool context of a run in `entry`: identity comes from here, not the model.

        `role` defaults to owner: every caller but a platform sender holds the gateway token or
        is the owner's configuration (HTTP, MCP, console, web chat, cron, hooks; D60); the
        router passes the sender's role."""
        return ToolContext(
            role=role,
            session_key=entry.key,
            agent_id=entry.agent_id,
            origin=origin or session_target(entry),
            sandboxed=via == "agent" and self.is_sandboxed(entry.key),
            via="http" if via == "http" else "agent",
            automated=self.keys.kind(entry.key) in ("cron", "hook"),
        )

    async def ensure_session(self, key: str, **fields: Unpack[SessionPatch]) -> SessionEntry:
        return await self.store.ensure_session(
            key, agent_id=agent_id_of(key), kind=self.keys.kind(key), **fields
        )

    async def start_run(
        self,
        request: RunRequest,
        *,
        check_policy: bool = True,
        entry: SessionEntry | None = None,
    ) -> RunRecord:
        """Admit a run; a session whose send policy denies it refuses (decision D5). `entry`:
        the session as the caller just read or made it, so it is not read again (D146)."""
        if entry is None or entry.key != request.session_key:
            entry = await self.store.get_session(request.session_key)
        if entry is None:
            entry = await self.ensure_session(request.session_key)
        if check_policy and self.gate.decide(entry).action == "deny":
            raise SendBlocked()
        return await self.runs.submit(request, entry)

    def fields(self) -> dict[str, Any]:
        """This object's collaborators, to build an environment that extends it."""
        return {name: getattr(self, name) for name in CoreServices.__dataclass_fields__}


__all__ = ["CoreServices", "PluginServices", "Services", "SessionStore"]
