"""``cron`` and ``hooks`` sections (decision D15): scheduled jobs and webhook mappings.

``CronJobConfig`` is also the shape of a job added at run time (HTTP, CLI, the agent tool), so
every job, wherever it comes from, passes the same validation.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, SecretStr, field_validator, model_validator

from core.config.schema_base import ConfigModel, normalize_agent_id

__all__ = [
    "JOB_ID_PATTERN",
    "CronConfig",
    "CronJobConfig",
    "DeliverTarget",
    "HookMappingConfig",
    "HooksConfig",
    "check_interval",
    "check_job_id",
]

JOB_ID_PATTERN = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
_HOOK_PATH = re.compile(r"[A-Za-z0-9._~-]+(/[A-Za-z0-9._~-]+)*")


def _agent_or_default(value: str | None) -> str | None:
    """A job's or a mapping's agent, normalised; blank means the default agent (None)."""
    return normalize_agent_id(value) if value and value.strip() else None


AgentIdOrDefault = Annotated[str | None, AfterValidator(_agent_or_default)]


def check_job_id(value: str) -> str:
    if not JOB_ID_PATTERN.fullmatch(value):
        raise ValueError(f"invalid id: {value!r} (must match [a-z0-9][a-z0-9_-]{{0,63}})")
    return value


class DeliverTarget(ConfigModel):
    """Where a job's or hook's final reply is sent: ``{channel, to, accountId?, threadId?}``."""

    channel: str = Field(min_length=1)
    to: str = Field(min_length=1)
    account_id: str | None = None
    thread_id: str | int | None = None

    @field_validator("channel")
    @classmethod
    def _channel(cls, value: str) -> str:
        from core.model.delivery_context import normalize_channel

        out = normalize_channel(value)
        if not out:
            raise ValueError("channel must not be empty")
        return out

    @field_validator("to")
    @classmethod
    def _to(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("to must not be empty")
        return value.strip()


Deliver = DeliverTarget | Literal["none"]


class CronJobConfig(ConfigModel):
    """One job: ``schedule`` (+ ``tz``) | ``every`` | ``at``, and what to say to which agent."""

    id: str
    schedule: str | None = None
    tz: str | None = None
    every: str | None = None
    at: str | None = None
    message: str = Field(min_length=1, max_length=16_000)
    agent_id: AgentIdOrDefault = None
    deliver: Deliver = "none"
    enabled: bool = True

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        return check_job_id(value)

    @field_validator("message")
    @classmethod
    def _message(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("message must not be empty")
        return value

    @model_validator(mode="after")
    def _schedule(self) -> CronJobConfig:
        from core.model.cron_schedule import Schedule

        Schedule.of(schedule=self.schedule, every=self.every, at=self.at, tz=self.tz)
        return self

    def wire(self) -> dict[str, Any]:
        """The job definition as JSON (camelCase, unset schedule forms left out)."""
        out = self.model_dump(by_alias=True, exclude_none=True, mode="json")
        out.setdefault("agentId", None)
        return out


class CronConfig(ConfigModel):
    """``cron``: jobs from the config file, plus limits on jobs that agents create."""

    jobs: list[CronJobConfig] = Field(default_factory=list)
    max_jobs_per_session: int = Field(default=20, ge=0)
    max_agent_jobs: int = Field(default=100, ge=0)
    """Jobs agents may hold in all, across every session (D81: a job's turn runs in a session
    of its own, so a per-session cap alone does not bound a job that makes jobs)."""
    agent_adds_per_minute: int = Field(default=5, ge=0)
    allow_from_cron_turns: bool = False
    """A cron or hook turn may create cron jobs (D81; off: a job cannot replicate itself)."""
    min_interval_seconds: int = Field(default=60, ge=1)
    """The shortest `every` a job may have, and the shortest gap between two firings of its
    `schedule` (D81)."""
    poll_seconds: float = Field(default=1.0, gt=0, le=60)

    @field_validator("jobs")
    @classmethod
    def _unique(cls, jobs: list[CronJobConfig]) -> list[CronJobConfig]:
        seen: set[str] = set()
        for job in jobs:
            if job.id in seen:
                raise ValueError(f"duplicate job id: {job.id}")
            seen.add(job.id)
        return jobs

    @model_validator(mode="after")
    def _intervals(self) -> CronConfig:
        for job in self.jobs:
            check_interval(job, self.min_interval_seconds)
        return self


def check_interval(job: CronJobConfig, min_seconds: int) -> None:
    """`every`, and the gap between two firings of a `schedule`, is at least
    `cron.minIntervalSeconds` (D81): with the bound raised, `schedule: "* * * * *"` fired
    every minute all the same."""
    from core.model.cron_schedule import fires_within, parse_every

    if job.schedule is not None and fires_within(job.schedule, min_seconds):
        raise ValueError(
            f"schedule: {job.schedule!r} fires more often than cron.minIntervalSeconds"
            f" ({min_seconds}s)"
        )
    if job.every is None:
        return
    if parse_every(job.every).total_seconds() < min_seconds:
        raise ValueError(
            f"every: {job.every!r} is shorter than cron.minIntervalSeconds ({min_seconds}s)"
        )


class HookMappingConfig(ConfigModel):
    """One webhook: ``POST /hooks/<path>`` with ``token`` runs a turn for ``agentId``."""

    id: str
    path: str
    token: SecretStr
    session_key: str | None = None
    agent_id: AgentIdOrDefault = None
    message_template: str | None = None
    deliver: Deliver = "none"

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        return check_job_id(value)

    @field_validator("path")
    @classmethod
    def _path(cls, value: str) -> str:
        path = value.strip().strip("/")
        if not _HOOK_PATH.fullmatch(path) or {".", ".."} & set(path.split("/")):
            raise ValueError(f"invalid path: {value!r} (letters, digits, . _ ~ - and /)")
        return path

    @field_validator("session_key")
    @classmethod
    def _session_key(cls, value: str | None) -> str | None:
        if value is None:
            return None
        key = value.strip()
        if not key.strip(":") or len(key) > 256:
            raise ValueError(f"invalid session key: {value!r}")
        return key

    @field_validator("token")
    @classmethod
    def _token(cls, value: SecretStr) -> SecretStr:
        if len(value.get_secret_value().strip()) < 8:
            raise ValueError("token must be at least 8 characters")
        return value

    @field_validator("message_template")
    @classmethod
    def _template(cls, value: str | None) -> str | None:
        if value is None:
            return None
        from core.model.hook_template import compile_template

        compile_template(value)  # a syntax error is a config error, not a 500 per request
        return value


class HooksConfig(ConfigModel):
    """``hooks``: webhook mappings and the largest body a hook request may carry."""

    mappings: list[HookMappingConfig] = Field(default_factory=list)
    max_body_bytes: int = Field(default=262_144, ge=1)

    @field_validator("mappings")
    @classmethod
    def _unique(cls, mappings: list[HookMappingConfig]) -> list[HookMappingConfig]:
        ids: set[str] = set()
        paths: set[str] = set()
        for m in mappings:
            if m.id in ids:
                raise ValueError(f"duplicate hook id: {m.id}")
            if m.path in paths:
                raise ValueError(f"duplicate hook path: {m.path}")
            ids.add(m.id)
            paths.add(m.path)
        return mappings
