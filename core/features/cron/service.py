"""The cron service: job CRUD over the store, the scheduler loop, and firings.

A firing claims its job in the store (core.store.cron.claim_due: one UPDATE … RETURNING),
runs one agent turn in `agent:<agentId>:cron:<jobId>`, delivers the reply through the gate,
then records `lastStatus`, the run history and the next time, and releases the claim. Because
the next time is computed from when the firing happened, ticks missed while the gateway was
down fire once at start, not once per missed tick. All time comes from `self.clock`.
`lastStatus` is `ok` when the turn answered and its reply was delivered or suppressed by the
send policy; a reply the gate could not deliver makes it `error`, with the reason (D136).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from core.config.schema_cron import CronJobConfig, check_interval
from core.features.cron.clock import Clock, SystemClock, to_ms
from core.features.cron.limits import AddLimiter
from core.features.cron.turns import deliver_target, finish_turn, public_error, start_turn
from core.model.cron_schedule import Schedule
from core.model.errors import CrosstalkError
from core.store import RunRecord, Store
from core.store.cron import CronJobRecord

if TYPE_CHECKING:
    from core.features.services import Services
    from core.model.tool_context import ToolContext

log = logging.getLogger(__name__)


async def _no_cluster() -> list[str] | None:
    return None


Source = Literal["config", "api", "agent"]


class CronError(CrosstalkError):
    """A refused cron operation; `status` is the HTTP code it maps to."""

    status = 400


class CronNotFound(CronError):
    status = 404


class CronConflict(CronError):
    status = 409


def schedule_of(spec: CronJobConfig) -> Schedule:
    return Schedule.of(schedule=spec.schedule, every=spec.every, at=spec.at, tz=spec.tz)


def spec_of(rec: CronJobRecord) -> CronJobConfig:
    return CronJobConfig.model_validate(rec.spec)


class CronService:
    def __init__(
        self,
        services: Services,
        *,
        live_ids: Callable[[], Awaitable[list[str] | None]] = _no_cluster,
        clock: Clock | None = None,
        run_loop: bool = True,
    ) -> None:
        self.services = services
        self.live_ids = live_ids
        """The live processes whose firing claims stay at a start (D29)."""
        self.clock: Clock = clock or SystemClock()
        self.run_loop = run_loop  # False: tests drive `tick()` themselves with a manual clock
        self._loop_task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._firings: set[asyncio.Task[None]] = set()
        self.add_limiter = AddLimiter()

    @property
    def store(self) -> Store:
        return self.services.store

    # ---- lifecycle --------------------------------------------------------------------------

    async def start(self) -> None:
        released = await self.store.release_cron_claims(await self.live_ids())
        if released:
            log.warning("released %d cron claim(s) left by a stopped gateway", released)
        await self.sync_config()
        if self.run_loop:
            self._loop_task = asyncio.create_task(self._loop(), name="cron-scheduler")

    async def stop(self) -> None:
        tasks = [t for t in (self._loop_task, *self._firings) if t is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._loop_task = None

    async def _loop(self) -> None:
        poll = self.services.config.cron.poll_seconds
        while True:
            self._wake.clear()
            try:
                await self.tick()
            except Exception:
                log.exception("cron tick failed")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), poll)

    async def sync_config(self) -> None:
        """Make the store's config-sourced jobs match `cron.jobs` (state kept when unchanged)."""
        now = self.clock.now()
        wanted = {job.id: job for job in self.services.config.cron.jobs}
        for rec in await self.store.list_jobs():
            if rec.source == "config" and rec.id not in wanted:
                await self.store.delete_job(rec.id)
        for job in wanted.values():
            try:
                self._agent(job)
            except CronError as exc:
                raise CronError(f"cron.jobs {job.id}: {exc}") from exc
            stored = await self.store.get_job(job.id)
            sched = schedule_of(job)
            if stored is None:
                if sched.at is not None and sched.at <= now:
                    continue  # a one-shot whose time passed before it was ever scheduled
                await self.store.insert_job(self._record(job, "config", None, now))
            elif stored.source != "config" or stored.spec != job.wire():
                fresh = self._record(job, "config", None, now)
                await self.store.update_job(
                    job.id,
                    spec=fresh.spec,
                    source="config",
                    agent_id=fresh.agent_id,
                    enabled=job.enabled,
                    owner_session=None,
                    next_run_at=fresh.next_run_at,
                    updated_at=fresh.updated_at,
                )

    # ---- jobs -------------------------------------------------------------------------------

    def _agent(self, spec: CronJobConfig) -> str:
        agent = spec.agent_id or self.services.config.default_agent_id()
        if self.services.config.agents.list and agent not in self.services.config.agent_ids():
            raise CronError(f"unknown agent: {agent}")
        return agent

    def _record(
        self, spec: CronJobConfig, source: Source, owner: str | None, now: datetime
    ) -> CronJobRecord:
        ms = to_ms(now)
        return CronJobRecord(
            id=spec.id,
            agent_id=self._agent(spec),
            spec=spec.wire(),
            source=source,
            created_at=ms,
            updated_at=ms,
            enabled=spec.enabled,
            owner_session=owner,
            next_run_at=to_ms(schedule_of(spec).first_run(now)),
        )

    def session_key(self, rec: CronJobRecord) -> str:
        return self.services.keys.cron_key(rec.agent_id, rec.id)

    def wire(self, rec: CronJobRecord, *, runs: bool = False) -> dict[str, Any]:
        """A job as the HTTP API, the CLI and the agent tool show it."""
        out: dict[str, Any] = {
            **rec.spec,
            "agentId": rec.agent_id,
            "enabled": rec.enabled,
            "sessionKey": self.session_key(rec),
            "source": rec.source,
            "createdBy": rec.owner_session,
            "creator": rec.creator,
            "lastRunAt": rec.last_run_at,
            "lastStatus": rec.last_status,
            "lastError": rec.last_error,
            "nextRunAt": rec.next_run_at if rec.enabled else None,
            "running": rec.running_since is not None,
        }
        if runs:
            out["runs"] = list(reversed(rec.runs or []))
        return out

    async def add(
        self,
        spec: CronJobConfig,
        *,
        source: Source,
        owner_session: str | None = None,
        creator: ToolContext | None = None,
    ) -> CronJobRecord:
        """`creator`: the turn of an agent that makes a job from someone's message; the job keeps
        who that was (D81) and its turns run as them (D176)."""
        now = self.clock.now()
        sched = schedule_of(spec)
        if sched.at is not None and sched.at <= now:
            raise CronError(f"at is in the past: {spec.at}")
        try:
            check_interval(spec, self.services.config.cron.min_interval_seconds)
        except ValueError as exc:
            raise CronError(str(exc)) from exc
        rec = self._record(spec, source, owner_session, now)
        if creator is not None and creator.sender is not None:
            rec.creator, rec.creator_role = creator.sender, creator.role
            rec.creator_person, rec.creator_group = creator.person_id, creator.group_id
        if not await self.store.insert_job(rec):
            raise CronConflict(f"cron job already exists: {spec.id}")
        self._wake.set()
        return rec

    async def get(self, job_id: str) -> CronJobRecord:
        rec = await self.store.get_job(job_id)
        if rec is None:
            raise CronNotFound(f"cron job not found: {job_id}")
        return rec

    async def jobs(self, *, owner_session: str | None = None) -> list[CronJobRecord]:
        return await self.store.list_jobs(owner_session=owner_session)

    async def count_agent_jobs(self, creator: str | None = None) -> int:
        """Jobs agents made, across every session (the `cron` tool's global cap, D81), or
        those one person's messages made (its cap per creator)."""
        return await self.store.count_agent_jobs(creator)

    async def count_jobs(self, owner_session: str) -> int:
        """How many jobs a session owns (the `cron` tool's per-session cap)."""
        return await self.store.count_jobs(owner_session)

    async def remove(self, job_id: str) -> None:
        rec = await self.get(job_id)
        if rec.source == "config":
            raise CronConflict(
                f"cron job {job_id} is defined in the config file (cron.jobs); remove it there"
            )
        await self.store.delete_job(job_id)

    async def set_enabled(self, job_id: str, enabled: bool) -> CronJobRecord:
        rec = await self.get(job_id)
        values: dict[str, Any] = {"enabled": enabled, "updated_at": to_ms(self.clock.now())}
        if enabled and not rec.enabled:  # ticks missed while disabled do not fire
            values["next_run_at"] = to_ms(schedule_of(spec_of(rec)).first_run(self.clock.now()))
        updated = await self.store.update_job(job_id, **values)
        if updated is None:
            raise CronNotFound(f"cron job not found: {job_id}")
        self._wake.set()
        return updated

    # ---- firing -----------------------------------------------------------------------------

    async def tick(self) -> list[asyncio.Task[None]]:
        """Fire every due job once; returns the firings (tests await them)."""
        now = self.clock.now()
        ms = to_ms(now)
        due = await self.store.earliest_due()
        if due is None or due > ms:
            return []
        fired = []
        for rec in await self.store.claim_due(ms, self.services.runs.owner):
            started = await self._fire(rec, now, manual=False)
            if started is not None:
                fired.append(started[1])
        return fired

    async def run_now(self, job_id: str) -> tuple[RunRecord, asyncio.Task[None]]:
        """`cron run ID`: fire now whatever the schedule; refused while the job is running."""
        await self.get(job_id)
        now = self.clock.now()
        rec = await self.store.claim_now(job_id, to_ms(now), self.services.runs.owner)
        if rec is None:
            raise CronConflict(f"cron job {job_id} is already running")
        started = await self._fire(rec, now, manual=True)
        if started is None:
            raise CronError(f"cron job {job_id} could not start (see lastError)")
        return started

    async def _fire(
        self, rec: CronJobRecord, now: datetime, *, manual: bool
    ) -> tuple[RunRecord, asyncio.Task[None]] | None:
        spec = spec_of(rec)
        target = deliver_target(spec.deliver)
        key = self.session_key(rec)
        try:
            run = await start_turn(
                self.services,
                key,
                spec.message,
                target,
                lane="cron",
                meta={"cronJob": rec.id},
                as_creator=rec,
            )
        except Exception as exc:
            log.warning("cron job %s could not start: %s", rec.id, exc)
            await self._finish(rec, spec, now, None, "error", str(exc), None, manual)
            return None
        task = asyncio.create_task(
            self._complete(rec, spec, run, now, manual), name=f"cron:{rec.id}"
        )
        self._firings.add(task)
        task.add_done_callback(self._firings.discard)
        return run, task

    async def _complete(
        self,
        rec: CronJobRecord,
        spec: CronJobConfig,
        run: RunRecord,
        fired_at: datetime,
        manual: bool,
    ) -> None:
        target = deliver_target(spec.deliver)
        try:
            done = await finish_turn(self.services, run, target, "cron")
        except Exception as exc:
            log.exception("cron job %s failed", rec.id)
            await self._finish(rec, spec, fired_at, run.id, "error", str(exc), None, manual)
            return
        ok = done.outcome.status == "ok"
        error = None if ok else public_error(done.outcome.error or done.outcome.status)
        if ok and done.delivery is not None and done.delivery.outcome == "failed":
            ok, error = False, f"reply not delivered: {done.delivery.reason}"  # D136
        await self._finish(
            rec,
            spec,
            fired_at,
            run.id,
            "ok" if ok else "error",
            error,
            done.delivery.outcome if done.delivery else None,
            manual,
        )

    async def _finish(
        self,
        rec: CronJobRecord,
        spec: CronJobConfig,
        fired_at: datetime,
        run_id: str | None,
        status: str,
        error: str | None,
        delivery: str | None,
        manual: bool,
    ) -> None:
        sched = schedule_of(spec)
        now = self.clock.now()
        nxt: int | None = None
        if sched.at is None:
            if manual and rec.next_run_at is not None and rec.next_run_at > to_ms(now):
                nxt = rec.next_run_at
            else:
                when = sched.next_after(fired_at)
                nxt = to_ms(when if when > now else sched.next_after(now))
        entry = {
            "runId": run_id,
            "startedAt": to_ms(fired_at),
            "endedAt": to_ms(now),
            "status": status,
            "error": error,
            "delivery": delivery,
            "trigger": "manual" if manual else "schedule",
        }
        await self.store.finish_firing(
            rec.id,
            entry=entry,
            status=status,
            error=error,
            next_run_at=nxt,
            remove=sched.at is not None,
            created_at=rec.created_at,
        )
        log.info(
            "cron job %s fired (%s): %s%s",
            rec.id,
            entry["trigger"],
            status,
            f" — {error}" if error else "",
        )
        self._wake.set()
