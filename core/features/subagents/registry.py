"""The sub-agent run registry (reference R4.8): persisted, restored at start, announced once.

Completion is detected by a run listener for runs of this process and, after a restart, from the
persisted run status (runs left in flight by a dead process were marked `aborted` by
`RunManager.recover`). The announce is claimed with a conditional UPDATE (`pending` → `running`),
so it is posted at most once; a claim left by a process that stopped mid-announce is released at
the next start, so it is also posted at least once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any

from core.engine.background import BackgroundTasks
from core.engine.runs import RunOutcome, RunRequest
from core.features.subagents.announce import AnnounceInterrupted, announce
from core.features.subagents.sweeper import DEFAULT_SWEEP_INTERVAL, SubagentSweeper
from core.features.subagents.yielded import yield_turn
from core.store import FINAL_RUN_STATUSES, RunRecord, now_ms
from core.store.subagents import (
    SubagentRecord,
)

if TYPE_CHECKING:
    from core.features.services import Services
    from core.model.tool_context import ToolContext

log = logging.getLogger(__name__)


async def _no_cluster() -> list[str] | None:
    return None


async def _sole_process(_name: str) -> bool:
    return True


STOPPED_REASON = "stopped by the requester"
CANCELLED_REASON = "cancelled by the session that started it"


class SubagentRegistry:
    def __init__(
        self,
        services: Services,
        *,
        live_ids: Callable[[], Awaitable[list[str] | None]] = _no_cluster,
        sweep_lease: Callable[[str], Awaitable[bool]] = _sole_process,
        sweep_interval: float = DEFAULT_SWEEP_INTERVAL,
    ) -> None:
        self.services = services
        self._live: dict[str, asyncio.Event] = {}
        self._tasks = BackgroundTasks("sub-agent")
        self.sweeper = SubagentSweeper(self, sweep_interval)
        self._closing = False
        self._listening = False
        self.live_ids = live_ids
        """The live processes whose announce claims stay at a start (D29); None: every
        claim was left by a previous process."""
        self.sweep_lease = sweep_lease
        """Takes the `sweeper` lease, so one process of a cluster sweeps (D29)."""

    # ---- lifecycle ------------------------------------------------------------------------

    async def start(self) -> None:
        """Restore persisted records: finish what ended while we were down, start the sweeper."""
        self._closing = False
        if not self._listening:
            self.services.runs.add_listener(self._on_run_finished)
            self._listening = True
        released = await self.services.store.release_stale_claims(await self.live_ids())
        if released:
            log.info("resuming %d interrupted sub-agent announce(s)", released)
        await self._resume()
        self.sweeper.start()

    async def resume(self) -> None:
        """Finish and announce what ended elsewhere (a dead process's sub-agents, D29)."""
        await self._resume()

    async def stop(self) -> None:
        """Called before the run manager closes, so no announce mistakes that for an outcome."""
        self._closing = True
        await self.sweeper.stop()
        await self._tasks.cancel_all()

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        self._tasks.spawn(coro)

    # ---- registration and completion ------------------------------------------------------

    async def register(self, rec: SubagentRecord) -> None:
        """Persist a spawn. Call right after `start_run`: the run is tracked before any await,
        so a completion racing the insert still finds it."""
        persisted = self._live[rec.run_id] = asyncio.Event()
        try:
            await self.services.store.insert_subagent_run(rec)
        finally:
            persisted.set()

    async def _on_run_finished(
        self, run: RunRecord, request: RunRequest, outcome: RunOutcome
    ) -> None:
        # While stopping, the outcome is left to the next start (`_resume` reads the run row).
        if run.id in self._live and not self._closing:
            self._spawn(self._complete(run, outcome))

    async def _complete(self, run: RunRecord, outcome: RunOutcome) -> None:
        await self._live[run.id].wait()
        self._live.pop(run.id, None)
        await self._record_outcome(run, outcome.status, outcome.error, outcome.reply)
        await self._finish(run.id)

    async def _record_outcome(
        self, run: RunRecord, status: str, error: str | None, reply: str | None
    ) -> None:
        """Persist how the child ended, with a usage snapshot taken before the announce step."""
        entry = await self.services.store.get_session(run.session_key)
        usage: dict[str, Any] = {
            "input_tokens": run.input_tokens,
            "output_tokens": run.output_tokens,
            "total_tokens": run.total_tokens,
        }
        if entry is not None:
            usage = {
                "input_tokens": entry.input_tokens,
                "output_tokens": entry.output_tokens,
                "total_tokens": entry.total_tokens,
            }
        answered = (run.meta or {}).get("model") or (entry.model if entry else None)
        if answered:  # the model that answered (a fallback, perhaps), else the pinned one
            usage["model"] = answered
        await self.services.store.update_subagent_run(
            run.id,
            started_at=run.started_at,
            ended_at=run.ended_at or now_ms(),
            outcome=status,
            error=error,
            reply=reply,
            **usage,
        )

    async def _finish(self, run_id: str) -> None:
        """Announce (once) and clean up a finished record."""
        rec = await self.services.store.get_subagent_run(run_id)
        if rec is None or rec.outcome is None:
            return
        if rec.announce_state == "stopped":
            await self._cleanup(rec)
            return
        if not await self.services.store.transition_announce(
            run_id,
            ("pending",),
            "running",
            announce_owner=self.services.runs.owner,
        ):  # D29
            return
        try:
            state = await announce(self.services, rec, lambda: self._closing)
        except AnnounceInterrupted:
            return  # still `running`; released and retried at the next start
        except Exception:
            log.exception("announce of sub-agent run %s failed; will retry at restart", run_id)
            await self.services.store.transition_announce(run_id, ("running",), "pending")
            return
        await self.services.store.transition_announce(
            run_id, ("running",), state, announced_at=now_ms()
        )
        await self._cleanup(rec)

    async def _cleanup(self, rec: SubagentRecord) -> None:
        if rec.cleanup == "delete":
            await self.delete_child(rec)

    async def delete_child(self, rec: SubagentRecord) -> None:
        """Delete the child session (its transcript file is renamed) and drop the record."""
        await self.services.store.delete_session(rec.child_key)
        await self.services.store.delete_subagent_run(rec.run_id)

    async def _resume(self) -> None:
        store = self.services.store
        for rec in await store.list_subagent_runs(unfinished=True):
            run = await store.get_run(rec.run_id)
            if run is None:
                continue
            if run.status not in FINAL_RUN_STATUSES:
                log.warning("sub-agent run %s is still %s after restart", run.id, run.status)
                continue
            await self._record_outcome(run, run.status, run.error, await self._final_reply(rec))
        for rec in await store.list_subagent_runs(announce_states=("pending", "stopped")):
            if rec.outcome is not None and (
                rec.announce_state == "pending" or rec.cleanup == "delete"
            ):
                self._spawn(self._finish(rec.run_id))

    async def _final_reply(self, rec: SubagentRecord) -> str | None:
        entry = await self.services.store.get_session(rec.child_key)
        if entry is None:
            return None
        for msg in reversed(await self.services.store.history(entry.session_id, limit=50)):
            if msg.role == "assistant" and msg.run_id == rec.run_id and msg.plain_text().strip():
                return msg.plain_text().strip()
        return None

    # ---- queries and control --------------------------------------------------------------

    async def runs_of(self, requester_key: str) -> list[SubagentRecord]:
        return await self.services.store.list_subagent_runs(requester_key=requester_key)

    async def get(self, run_id: str) -> SubagentRecord | None:
        return await self.services.store.get_subagent_run(run_id)

    def is_running(self, rec: SubagentRecord) -> bool:
        return rec.outcome is None and self.services.runs.is_active(rec.child_key)

    async def stop_run(self, rec: SubagentRecord) -> bool:
        """Abort a running child; a run stopped by the user is not announced."""
        if rec.outcome is not None:
            return False
        await self.services.store.transition_announce(rec.run_id, ("pending",), "stopped")
        if await self.services.runs.abort_session(rec.child_key, STOPPED_REASON) > 0:
            return True
        # it had just finished on its own: announce it after all
        if await self.services.store.transition_announce(rec.run_id, ("stopped",), "pending"):
            current = await self.services.store.get_subagent_run(rec.run_id)
            if current is not None and current.outcome is not None:
                self._spawn(self._finish(rec.run_id))
        return False

    async def cancel_run(self, rec: SubagentRecord) -> bool:
        """`subagents {action: "cancel"}` (D68): abort a running child; unlike a `/stop` it is
        announced, ending `aborted` with the reason in its notes."""
        if rec.outcome is not None:
            return False
        return await self.services.runs.abort_session(rec.child_key, CANCELLED_REASON) > 0

    async def yield_turn(self, ctx: ToolContext) -> bool:
        """`sessions_yield` (D69): the caller's next turn is the next announce or message;
        False when none of its sub-agents is running (nothing to wait for)."""
        return await yield_turn(self.services, ctx)

    async def stop_of(self, requester_key: str) -> int:
        """`/stop` in the requester chat: stop every running sub-agent it spawned."""
        stopped = 0
        for rec in await self.services.store.list_subagent_runs(
            requester_key=requester_key, unfinished=True
        ):
            stopped += await self.stop_run(rec)
        return stopped
