"""The sub-agent announce (decision D6, contract A of reference R4.9).

An announce step runs in the child session and asks for `Result:`/`Notes:`. Its reply is
normalised to `Status:` (from the run outcome, never from model text) / `Result:` / `Notes:` plus
the stats line, posted through the outbound gate to the requester's chat as it was when the
sub-agent was spawned, and appended to the requester's transcript so its agent knows.
"""

from __future__ import annotations

import logging
import math
import re
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.engine.outbound.delivery import DeliveryResult, Outbound
from core.engine.runs import RunRequest
from core.features.subagents.prompts import ANNOUNCE_SKIP, ANNOUNCE_USER_MESSAGE, announce_prompt
from core.features.subagents.yielded import resume_with_announce
from core.model.keys import agent_id_of
from core.model.roles import parse_role
from core.model.tool_context import ToolContext
from core.store import SessionEntry, TranscriptMessage, now_ms
from core.store.subagents import SubagentRecord

if TYPE_CHECKING:
    from core.features.services import Services

log = logging.getLogger(__name__)

ANNOUNCE_STEP_TIMEOUT = 120.0
NOT_AVAILABLE = "(not available)"

_HEADER = re.compile(
    r"^\s*(?:[-*]\s+)?(?:\*\*)?\s*(result|notes)\s*(?:\*\*)?\s*:\s*(?:\*\*)?\s?(.*)$",
    re.IGNORECASE,
)
_EMPTY_NOTES = frozenset({"none", "(none)", "- (none)", "- none", "n/a", "-"})


class AnnounceInterrupted(Exception):
    """The gateway is stopping mid-announce: leave it pending so a restart resumes it."""


def status_word(outcome: str | None) -> str:
    """`Status:` from the runtime outcome; an aborted run (e.g. a restart) counts as error."""
    return {"ok": "success", "error": "error", "aborted": "error", "timeout": "timeout"}.get(
        outcome or "", "unknown"
    )


@dataclass(frozen=True, slots=True)
class ParsedReply:
    result: str | None
    notes: str | None


def parse_reply(reply: str) -> ParsedReply:
    """Split a reply into its `Result:`/`Notes:` sections (headers case-insensitive, bullets
    and **bold** allowed). Without a Result section the text outside Notes is the result."""
    sections: dict[str, list[str]] = {}
    loose: list[str] = []
    current: list[str] = loose
    for line in reply.splitlines():
        match = _HEADER.match(line)
        if match:
            current = sections.setdefault(match.group(1).lower(), [])
            rest = match.group(2).strip().removesuffix("**").strip()
            if rest:
                current.append(rest)
            continue
        current.append(line)

    def joined(lines: list[str] | None) -> str | None:
        text = "\n".join(lines or []).strip()
        return text or None

    result = joined(sections.get("result"))
    if "result" not in sections:
        result = joined(loose) if "notes" in sections else (reply.strip() or None)
    return ParsedReply(result, joined(sections.get("notes")))


def announce_text(*, outcome: str | None, error: str | None, reply: str | None, stats: str) -> str:
    parsed = parse_reply(reply or "")
    notes: list[str] = []
    if parsed.notes and parsed.notes.strip().lower() not in _EMPTY_NOTES:
        notes.append(parsed.notes)
    if outcome != "ok":
        notes.append(f"- Error: {error or 'unknown error'}")
    return "\n".join(
        [
            f"Status: {status_word(outcome)}",
            "",
            "Result:",
            parsed.result or NOT_AVAILABLE,
            "",
            "Notes:",
            *(notes or ["- (none)"]),
            "",
            stats,
        ]
    )


# ---- stats line ------------------------------------------------------------------------------


def format_duration(ms: int | None) -> str:
    """`XhYm`, `XmYs` or `Xs`; a missing or zero duration is `n/a` (10 ms is `0s`)."""
    if not ms or ms <= 0:
        return "n/a"
    total = round(ms / 1000)
    hours, minutes, seconds = total // 3600, (total % 3600) // 60, total % 60
    if hours:
        return f"{hours}h{minutes}m"
    if minutes:
        return f"{minutes}m{seconds}s"
    return f"{seconds}s"


def format_tokens(value: int | None) -> str:
    if value is None:
        return "n/a"
    if value >= 1_000_000:
        return f"{value / 1_000_000:.1f}m"
    if value >= 1_000:
        return f"{value / 1_000:.1f}k"
    return str(value)


def format_cost(cost: float) -> str:
    return f"${cost:.2f}" if cost >= 0.01 else f"${cost:.4f}"


def model_cost(
    rt: Services, model_ref: str | None, tin: int | None, tout: int | None
) -> float | None:
    """`(in × cost.input + out × cost.output) / 1e6` when the model's price is configured."""
    if not model_ref:
        return None
    provider_id, _, model_id = model_ref.partition("/")
    provider = rt.config.models.providers.get(provider_id)
    entry = next((m for m in provider.models if m.id == model_id), None) if provider else None
    if entry is None or entry.cost is None:
        return None
    cost = ((tin or 0) * entry.cost.input + (tout or 0) * entry.cost.output) / 1e6
    return cost if math.isfinite(cost) else None


def stats_line(rt: Services, rec: SubagentRecord, entry: SessionEntry | None) -> str:
    runtime = (rec.ended_at - (rec.started_at or rec.created_at)) if rec.ended_at else None
    tin, tout = rec.input_tokens, rec.output_tokens
    total = rec.total_tokens
    if total is None and (tin is not None or tout is not None):
        total = (tin or 0) + (tout or 0)
    parts = [f"runtime {format_duration(runtime)}"]
    parts.append(
        f"tokens {format_tokens(total)} (in {format_tokens(tin)} / out {format_tokens(tout)})"
        if total is not None
        else "tokens n/a"
    )
    model = (
        rec.model
        or (entry.model if entry else None)
        or rt.models.default_ref(rt.keys.agent_of(rec.child_key))
    )
    cost = model_cost(rt, model, tin, tout)
    if cost is not None:
        parts.append(f"est {format_cost(cost)}")
    parts.append(f"sessionKey {rec.child_key}")
    if entry is not None:
        parts.append(f"sessionId {entry.session_id}")
        parts.append(f"transcript {rt.store.transcript_path(entry.session_id)}")
    return "Stats: " + " • ".join(parts)


# ---- the announce itself ---------------------------------------------------------------------


async def _announce_step(
    rt: Services, rec: SubagentRecord, entry: SessionEntry, closing: Any
) -> str | None:
    """Run the announce step in the child; its reply, or None when the step failed."""
    ctx = ToolContext(
        session_key=rec.child_key,
        agent_id=agent_id_of(rec.child_key),
        origin=None,
        sandboxed=rt.is_sandboxed(rec.child_key),
        trace_id=rec.trace_id or uuid.uuid4().hex,
        hops=rec.hops,
        role=parse_role(rec.role),  # the requester's, never higher (D60)
        sender=rec.sender,  # its limits and rules, as for the child's other runs (D149)
        person_id=rec.person_id,
        group_id=rec.group_id,
        automated=bool(rec.automated),
    )
    prompt = announce_prompt(
        task=rec.task, label=rec.label, status=status_word(rec.outcome), error=rec.error
    )
    step = await rt.start_run(
        RunRequest(
            session_key=rec.child_key,
            message=ANNOUNCE_USER_MESSAGE,
            context=ctx,
            extra_system_prompt=prompt,
            deliver=False,
            lane="subagent",
            timeout_seconds=ANNOUNCE_STEP_TIMEOUT,
            model=rec.model,
            meta={"subagentAnnounce": rec.run_id},
        ),
        check_policy=False,
    )
    outcome = await rt.runs.wait(step.id, None)
    if outcome.status == "aborted" and closing():
        raise AnnounceInterrupted(rec.run_id)
    if outcome.status != "ok":
        log.warning("announce step of %s ended %s: %s", rec.run_id, outcome.status, outcome.error)
        return None
    return outcome.reply or ""


async def announce(rt: Services, rec: SubagentRecord, closing: Any) -> str:
    """Run the announce for a finished record; returns the final announce state."""
    entry = await rt.store.get_session(rec.child_key)
    reply = await _announce_step(rt, rec, entry, closing) if entry is not None else None
    if reply is not None and reply.strip() == ANNOUNCE_SKIP:
        return "skipped"
    if reply is None or not reply.strip():
        reply = rec.reply  # the step failed or said nothing: report the child's own answer
    text = announce_text(
        outcome=rec.outcome, error=rec.error, reply=reply, stats=stats_line(rt, rec, entry)
    )
    result = await rt.gate.deliver(
        Outbound(text, "announce", rec.requester_key, target=rec.origin, run_id=rec.run_id)
    )
    await _append_to_requester(rt, rec, text, result)
    return "done"


async def _append_to_requester(
    rt: Services, rec: SubagentRecord, text: str, result: DeliveryResult
) -> None:
    """The requester's agent learns of it: as the input of its next turn when it yielded to
    wait for it (D69), else as a transcript entry it reads at its next turn."""
    meta = {
        "announce": True,
        "kind": "subagent_announce",
        "subagentRunId": rec.run_id,
        "childSessionKey": rec.child_key,
        "delivery": result.outcome,
    }
    if await resume_with_announce(rt, rec.requester_key, text, meta):
        return
    requester = await rt.store.get_session(rec.requester_key)
    if requester is None:
        return
    await rt.store.append_messages(
        requester, [TranscriptMessage.text("assistant", text, now_ms(), meta=meta)]
    )
