"""One triggered turn: run a message in a `cron:`/`hook:` session, then deliver the final reply
through the outbound gate (policy applies and is logged there, like any delivery).

Shared by cron firings and webhooks so both behave the same: the session's last route is set to
the delivery target (so a send-policy rule on that channel applies, and `sessions_list` shows
where the session speaks), and the turn runs even in a denied session — only the delivery is
suppressed (D15: a suppressed reply still counts as `ok`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from core.config.schema_cron import DeliverTarget
from core.engine.outbound.delivery import DeliveryResult
from core.engine.outbound.run_end import deliver_run_end
from core.engine.runs import RunOutcome, RunRequest
from core.model.delivery_context import DeliveryContext, normalize_delivery_context
from core.model.roles import parse_role
from core.store import RunRecord
from core.store.cron import CronJobRecord

if TYPE_CHECKING:
    from core.features.services import Services


def deliver_target(deliver: DeliverTarget | str | dict[str, Any] | None) -> DeliveryContext | None:
    """A job's or hook's `deliver` as a delivery context; `none` gives None."""
    if deliver is None or deliver == "none" or isinstance(deliver, str):
        return None
    raw = deliver.model_dump(by_alias=True) if isinstance(deliver, DeliverTarget) else deliver
    return normalize_delivery_context(raw)


def target_wire(target: DeliveryContext | None) -> dict[str, Any] | str:
    return target.model_dump(by_alias=True) if target is not None else "none"


@dataclass(slots=True)
class TurnDone:
    outcome: RunOutcome
    delivery: DeliveryResult | None


async def start_turn(
    rt: Services,
    key: str,
    message: str,
    target: DeliveryContext | None,
    *,
    lane: str,
    meta: dict[str, Any],
    as_creator: CronJobRecord | None = None,
) -> RunRecord:
    """Create (or reuse) the session, point its route at `target`, queue the turn: as the
    person whose message made the job, when an agent made it (D176), else as the owner's
    configuration (D60)."""
    await rt.ensure_session(key)
    if target is not None:
        await rt.store.update_session(
            key,
            last_channel=target.channel,
            last_to=target.to,
            last_account_id=target.account_id,
            last_thread_id=str(target.thread_id) if target.thread_id is not None else None,
        )
    entry = await rt.store.get_session(key)
    assert entry is not None
    ctx = replace(rt.context_for(entry, origin=target), automated=True)  # D81
    if as_creator is not None and as_creator.creator is not None:
        ctx = replace(
            ctx,
            role=parse_role(as_creator.creator_role),  # never higher than theirs; unknown: guest
            sender=as_creator.creator,
            person_id=as_creator.creator_person,
            group_id=as_creator.creator_group,
        )
    if target is not None:  # for a process that adopts the turn after a crash (webhooks)
        meta = {**meta, FINISHER: rt.runs.owner, TARGET: target_wire(target)}
    return await rt.runs.submit(
        RunRequest(
            session_key=key,
            message=message,
            context=ctx,
            deliver=False,
            lane=lane,
            timeout_seconds=float(rt.config.agents.defaults.timeout_seconds),
            meta=meta,
        ),
        entry,
    )


FINISHER = "finisher"
"""The process whose `finish_turn` delivers the reply (its cluster id, fresh per start)."""
TARGET = "deliverTo"


class AdoptedHookTurns:
    """A webhook turn accepted (`202`) and still queued when its process died is run by the
    process that adopts it (D27, D81), whose `finish_turn` never existed: its reply went
    nowhere. This run listener delivers it, as `finish_turn` would have (kind `hook`, no
    failure notice). A cron turn is left alone: its job fires again after the crash (D29)."""

    def __init__(self, rt: Services) -> None:
        self.rt = rt

    async def on_run_finished(
        self, run: RunRecord, request: RunRequest, outcome: RunOutcome
    ) -> None:
        meta = request.meta or {}
        if "hook" not in meta or TARGET not in meta or meta.get(FINISHER) == self.rt.runs.owner:
            return
        await deliver_run_end(
            self.rt.gate,
            session_key=run.session_key,
            run_id=run.id,
            target=deliver_target(meta[TARGET]),
            status=outcome.status,
            reply=outcome.reply,
            error=outcome.error,
            reply_kind="hook",
            notices=False,
        )


async def finish_turn(
    rt: Services, run: RunRecord, target: DeliveryContext | None, kind: Literal["cron", "hook"]
) -> TurnDone:
    """Wait for the turn to end and deliver its reply (when it has one and a target)."""
    outcome = await rt.runs.wait(run.id, None)
    delivery = None
    if target is not None:  # the turn's reply (no failure notice) to its target, D99's one path
        delivery = await deliver_run_end(
            rt.gate,
            session_key=run.session_key,
            run_id=run.id,
            target=target,
            status=outcome.status,
            reply=outcome.reply,
            error=outcome.error,
            reply_kind=kind,
            notices=False,
        )
    return TurnDone(outcome, delivery)


_PROVIDER_HTTP = re.compile(r"^status_code: (\d{3}), model_name:")


def public_error(error: str | None) -> str | None:
    """A run error as the API may show it: a provider failure only as D12's text (the detail
    stays in the gateway log)."""
    if error and (m := _PROVIDER_HTTP.match(error)):
        return f"⚠️ The model provider failed (HTTP {m.group(1)}). Details are in the gateway log."
    return error
