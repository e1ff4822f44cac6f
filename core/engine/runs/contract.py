"""What a run is asked (`RunRequest`), what its turn answers (`TurnResult`, `Pause`) and how it
ended (`RunOutcome`): shared by the run manager, its callers and the turn executor, so it lives
apart from the manager's queueing."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from core.model.approvals import Approval
from core.model.records import TurnWrite
from core.model.tool_context import ToolContext
from core.store import FINAL_RUN_STATUSES, RunRecord, SessionEntry, TranscriptMessage
from core.store.inbound import Claim

DeltaSink = Callable[[str], Awaitable[None]]
Steer = Callable[[], Awaitable[list[str]]]


@dataclass(slots=True)
class RunRequest:
    """What to run: `message` becomes the user turn unless `input_message_id` is given."""

    session_key: str
    message: str
    context: ToolContext
    extra_system_prompt: str | None = None
    deliver: bool = False
    lane: str = "main"
    timeout_seconds: float | None = None
    input_message_id: int | None = None
    message_meta: dict[str, Any] | None = None
    input_message: TranscriptMessage | None = None
    """The user turn as it is to be stored (e.g. with attachment parts, D3); else `message`."""
    model: str | None = None
    thinking: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    on_delta: DeltaSink | None = None
    claims: tuple[Claim, ...] = ()
    """Inbound identities stored with the message and the run (D16); a repeat raises
    DuplicateInbound from :meth:`RunManager.submit` before anything is queued."""
    steer: Steer | None = None
    """Set while the turn runs under `steer` (D75): the texts that arrived since, taken into
    the turn before its next model request."""


@dataclass(slots=True)
class TurnResult:
    reply: str | None
    input_tokens: int | None = None
    output_tokens: int | None = None
    context_tokens: int | None = None
    write: TurnWrite | None = None
    """The turn's new transcript rows and session fields: committed with the run's end, in
    one transaction (D41), before anyone waiting on the run is told."""
    pause: Pause | None = None
    """The turn stopped to ask people (D72, D73): the run waits, durably, for the answers."""


@dataclass(slots=True)
class Pause:
    """What a paused run stores: its meta (with the partial turn) and its questions."""

    meta: dict[str, Any]
    questions: list[Approval]


@dataclass(slots=True)
class RunOutcome:
    run_id: str
    status: str
    error: str | None = None
    reply: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None

    @property
    def final(self) -> bool:
        return self.status in FINAL_RUN_STATUSES


class TurnExecutor(Protocol):
    async def run_turn(
        self, run: RunRecord, request: RunRequest, entry: SessionEntry, on_delta: DeltaSink | None
    ) -> TurnResult: ...


RunListener = Callable[[RunRecord, RunRequest, RunOutcome], Awaitable[None]]
PauseListener = Callable[[RunRecord, RunRequest, list[Approval]], Awaitable[None]]
