"""Approvals (D72): a paused run's questions go out through the gate, and the first decision
of each, from a chat, a button, the CLI, HTTP or the clock, resumes the run once.

Whichever process decides the run's last question adopts it (the store's decision turns it
back to `queued` for that process), so a paused run needs no live process of its own: it
survives restarts and is answered on any process.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from core.engine.background import cancel_and_wait
from core.engine.outbound.delivery import DeliveryResult, Outbound
from core.engine.runs.rebuild import rebuild_request
from core.model.approvals import (
    Approval,
    Button,
    RequestRef,
    answer_of,
    answered_text,
    approval_buttons,
    decided_text,
    question_buttons,
    question_options,
    question_text,
    request_text,
)
from core.model.delivery_context import DeliveryContext
from core.store import now_ms

if TYPE_CHECKING:
    from core.engine.runs import RunRequest
    from core.features.services import Services
    from core.store import RunRecord

log = logging.getLogger(__name__)

Verdict = Literal["approved", "denied", "expired"]
SWEEP_SECONDS = 5.0
"""How often a process looks for questions whose time is up."""


@dataclass(slots=True)
class DecideResult:
    """A decision's outcome: `approval` (decided now) or why nothing changed."""

    approval: Approval | None
    error: str | None = None


class ApprovalService:
    """Sends a paused run's requests, takes decisions, expires the unanswered, resumes runs."""

    def __init__(
        self,
        services: Services,
        *,
        owner: str | None,
        clock: Callable[[], int] = now_ms,
        sweep_seconds: float = SWEEP_SECONDS,
    ) -> None:
        self.services = services
        self.owner = owner
        self.clock = clock
        self.sweep_seconds = sweep_seconds
        self._task: asyncio.Task[None] | None = None

    # ---- out: the requests ------------------------------------------------------------------

    def targets(self, request: RunRequest) -> list[DeliveryContext]:
        """D72: the turn's own chat when its sender is an owner, else each owner's DM on that
        channel (no chat at all for a turn started over HTTP: the API and CLI answer it)."""
        origin = request.context.origin
        if origin is None or not origin.channel or not origin.to:
            return []
        if request.context.owner:
            return [origin]
        section = getattr(self.services.config.channels, origin.channel, None)
        owners = [o for o in getattr(section, "owners", None) or [] if o != "*"]
        adapter = self.services.gate.channels.get(origin.channel, origin.account_id)
        return [
            DeliveryContext(
                channel=origin.channel,
                to=adapter.dm_target(o) if adapter is not None else o,
                account_id=origin.account_id,
            )
            for o in owners
        ]

    async def on_paused(
        self, run: RunRecord, request: RunRequest, questions: list[Approval]
    ) -> None:
        """A run listener: each approval request goes out through the gate (D72)."""
        for q in questions:
            if q.kind == "approval":
                text, buttons, targets = request_text(q), approval_buttons(q), self.targets(request)
            else:  # D73: the question goes to the turn's own chat
                origin = request.context.origin
                targets = [origin] if origin is not None and origin.to else []
                text, buttons = question_text(q), question_buttons(q)
            refs: list[RequestRef] = []
            for target in targets:
                result = await self._send(run, target, text, buttons)
                if result.delivered and target.channel and target.to:
                    last = result.receipts[-1].message_id if result.receipts else None
                    refs.append(
                        RequestRef(
                            target.channel,
                            target.to,
                            target.account_id or "default",
                            str(target.thread_id) if target.thread_id is not None else None,
                            last,
                        )
                    )
            if refs:
                await self.services.store.set_question_requests(q.id, refs)

    async def _send(
        self, run: RunRecord, target: DeliveryContext, text: str, buttons: tuple[Button, ...]
    ) -> DeliveryResult:
        return await self.services.gate.deliver(
            Outbound(
                text, "approval", run.session_key, target=target, run_id=run.id, buttons=buttons
            )
        )

    # ---- in: decisions ----------------------------------------------------------------------

    async def pending(self) -> list[Approval]:
        return await self.services.store.questions(kind="approval")

    async def decide(self, approval_id: str, verdict: Verdict, *, by: str | None) -> DecideResult:
        """Decide an approval once; the first decision wins and every later one is told so."""
        key = approval_id.strip().upper()
        store = self.services.store
        known = await store.question(key)
        if known is None or known.kind != "approval":
            return DecideResult(None, f"No pending approval with id {key}.")
        decision = await store.decide_question(
            key, verdict, by=by, now=self.clock(), owner=self.owner
        )
        if decision is None:
            known = await store.question(key) or known
            if known.status == "pending":  # its time is up and the sweep has not run (D187)
                await self.expire_due()
                known = await store.question(key) or known
            return DecideResult(None, f"Approval {key} was already {known.status}.")
        approval = decision.approval
        await self._settled(approval)
        if decision.resumed is not None:
            await self.resume(decision.resumed)
        return DecideResult(approval)

    async def answer(self, session_key: str, sender: str, text: str, *, button: bool) -> bool:
        """The requester's press or message in the chat of a pending question (D73): it is the
        answer (True: consumed, it starts no turn). A press names its question and option
        (`/answer ID N`); a message answers the session's oldest pending question."""
        store = self.services.store
        pending = [
            q
            for q in await store.questions(kind="question", session_key=session_key)
            if q.requester.get("sender") in (None, sender)
        ]
        if not pending:
            return False
        question, answer = pending[0], answer_of(pending[0], text)
        if button:
            words = text.split()
            found = [q for q in pending if len(words) == 3 and q.id == words[1].upper()]
            options = question_options(found[0]) if found else []
            if not found or not words[2].isdigit() or not 1 <= int(words[2]) <= len(options):
                return False
            question, answer = found[0], options[int(words[2]) - 1]
        elif text.startswith("/"):
            return False  # commands stay commands while a question waits
        who = sender.split(":", 1)[-1]
        decision = await store.decide_question(
            question.id, "answered", by=who, now=self.clock(), owner=self.owner, answer=answer
        )
        if decision is None:
            return False
        await self._settled(decision.approval)
        if decision.resumed is not None:
            await self.resume(decision.resumed)
        return True

    async def _settled(self, q: Approval) -> None:
        text = decided_text(q) if q.kind == "approval" else answered_text(q)
        for ref in q.requests:
            if ref.message_id:
                await self.services.gate.edit(q.session_key, ref.target(), ref.message_id, text)

    async def resume(self, run: RunRecord) -> None:
        """Run a paused run again on this process: its turn goes on with the decisions."""
        entry = await self.services.store.get_session(run.session_key)
        if entry is None:
            await self.services.store.update_run(
                run.id, status="aborted", ended_at=now_ms(), error="session was deleted"
            )
            return
        request = await rebuild_request(self.services.store, run, entry, self.services.context_for)
        request.timeout_seconds = request.timeout_seconds or float(
            self.services.config.agents.defaults.timeout_seconds
        )
        self.services.runs.adopt(run, request)

    async def expire_due(self) -> int:
        """Expire every pending question whose time is up; returns how many this call did."""
        done = 0
        store = self.services.store
        for q in await store.due_questions(self.clock()):
            status = "expired" if q.kind == "approval" else "timeout"
            decision = await store.decide_question(
                q.id, status, by=None, now=self.clock(), owner=self.owner
            )
            if decision is None:
                continue  # decided meanwhile, here or elsewhere
            done += 1
            await self._settled(decision.approval)
            if decision.resumed is not None:
                await self.resume(decision.resumed)
        return done

    # ---- lifecycle --------------------------------------------------------------------------

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._sweep(), name="approvals:sweep")

    async def stop(self) -> None:
        await cancel_and_wait(self._task)
        self._task = None

    async def _sweep(self) -> None:
        while True:
            try:
                await self.expire_due()
            except Exception:
                log.exception("expiring approvals failed")
            await asyncio.sleep(self.sweep_seconds)


__all__ = ["ApprovalService", "DecideResult"]
