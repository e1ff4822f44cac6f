"""`sessions_send`: run a message in another session and report its reply (R2.3, R3.1–R3.2).

Checks run in the reference's order and return its exact texts; every refusal carries a fresh
`runId` (and the display `sessionKey` once the target is known) and starts nothing. Before a
run starts, the chain's hop budget and the source session's send rate are checked (D8). The
reply-back loop then continues in the background (plugins.session_tools.a2a).

A send from inside a running turn into that turn's own session returns `accepted` at once
instead of waiting: the new run queues behind the requester's turn, which is itself waiting for
this tool, so a wait could only ever time out. Any other send (e.g. over `POST /tools/invoke`,
where no turn of the caller is waiting) waits like a send into another session.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import replace
from typing import TYPE_CHECKING, Literal

from pydantic import field_validator

from core.api.plugins import (
    SendBlocked,
    ToolArgs,
    ToolContext,
    ToolRefused,
    ToolSpec,
    floor_clamp,
    required_text,
)
from core.api.sessions import (
    STEER_LANE,
    InvalidSessionKey,
    RunRequest,
    TranscriptMessage,
    hop_error,
    normalize_agent_id,
    now_ms,
    session_target,
)
from plugins.session_tools.a2a import LANE, A2ASend, message_context, run_a2a_flow
from plugins.session_tools.reply_text import latest_assistant_reply
from plugins.session_tools.resolve import (
    Resolved,
    not_visible,
    resolve_reference,
    spawned_by_requester,
)
from plugins.session_tools.results import SessionsSendModeResult, SessionsSendResult
from plugins.session_tools.visibility import Visibility, a2a_policy, visibility_for

if TYPE_CHECKING:
    from core.api.plugins import ToolEnv

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 30
MAX_LABEL = 64
BOTH_GIVEN = "Provide either sessionKey or label (not both)."
NEITHER_GIVEN = "Either sessionKey or label is required"
LABEL_OWN_AGENT = "Sandboxed sessions_send label lookup is limited to this agent"
A2A_DISABLED = (
    "Agent-to-agent messaging is disabled. Set tools.agentToAgent.enabled=true to "
    "allow cross-agent sends."
)
A2A_DENIED = "Agent-to-agent messaging denied by tools.agentToAgent.allow."
PENDING_ANNOUNCE = {"status": "pending", "mode": "announce"}


class SessionsSendArgs(ToolArgs):
    session_key: str | None = None
    label: str | None = None
    agent_id: str | None = None
    message: str | None = None
    timeout_seconds: float | None = None
    mode: Literal["run", "notify", "steer"] = "run"
    """D70: `run` (a turn in the target), `notify` (context only, no turn), `steer` (into
    the target's running turn; as `run` when it is idle)."""

    @field_validator("timeout_seconds", mode="before")
    @classmethod
    def _lenient_timeout(cls, value: object) -> object:
        """R2.3: a non-numeric timeout means the default, not a thrown error."""
        if value is None or isinstance(value, bool):
            return None
        try:
            return float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return None


def _outcome(
    run_id: str, status: Literal["timeout", "error"], error: str | None, session_key: str
) -> SessionsSendResult:
    """A finished exchange that did not answer (a result, not a refusal)."""
    return SessionsSendResult(run_id=run_id, status=status, error=error, session_key=session_key)


def _a2a_refusal(env: ToolEnv, requester: str, target: str) -> str | None:
    """The cross-agent "messaging" text when `requester` may not send to `target` (R1.8)."""
    if requester == target:
        return None
    policy = a2a_policy(env)
    if not policy.enabled:
        return A2A_DISABLED
    return None if policy.is_allowed(requester, target) else A2A_DENIED


LABEL_SCAN = 50
"""Sessions with one label looked at before the role scope filters them (labels are unique in
practice, D61 filters after the query)."""


async def _key_for_label(env: ToolEnv, vis: Visibility, label: str, agent_raw: str | None) -> str:
    """Step 3 of R2.3: the key of the one session with `label`; refuses otherwise."""
    agent = normalize_agent_id(agent_raw) if agent_raw and agent_raw.strip() else None
    if vis.restricted and agent is not None and agent != vis.requester_agent:
        raise ToolRefused(LABEL_OWN_AGENT)
    if agent is not None and (refused := _a2a_refusal(env, vis.requester_agent, agent)):
        raise ToolRefused(refused)
    if len(label) > MAX_LABEL:
        error = f"invalid label: too long (max {MAX_LABEL})"
        found = []
    else:
        candidates = await env.store.find_by_label(
            label,
            agent_id=agent,
            spawned_by=vis.requester_key if vis.restricted else None,
            limit=LABEL_SCAN,
        )
        found = [e for e in candidates if await vis.in_scope(env, e.key)][:2]  # D61
        error = (
            f"No session found with label: {label}"
            if not found
            else f"Multiple sessions found with label: {label} ({', '.join(e.key for e in found)})"
        )
    if len(found) == 1:
        return found[0].key
    if vis.restricted:
        raise ToolRefused(not_visible(f"label={label}"))
    raise ToolRefused(error, status="error")


async def _target(env: ToolEnv, vis: Visibility, args: SessionsSendArgs) -> Resolved:
    """Steps 2–7 of R2.3: the visible, allowed target; refuses otherwise."""
    raw = (args.session_key or "").strip()
    label = (args.label or "").strip()
    if raw and label:
        raise ToolRefused(BOTH_GIVEN, status="error")
    if not raw and label:
        raw = await _key_for_label(env, vis, label, args.agent_id)
    if not raw:
        raise ToolRefused(NEITHER_GIVEN, status="error")
    try:
        target = await resolve_reference(env, vis, raw)
    except InvalidSessionKey as exc:
        raise ToolRefused(str(exc), status="error") from None
    if (
        vis.restricted
        and not target.via_session_id
        and not await spawned_by_requester(env, vis, target.key)
    ):
        raise ToolRefused(not_visible(raw), sessionKey=target.display)
    refused = _a2a_refusal(env, vis.requester_agent, env.keys.agent_of(target.key))
    if refused:
        raise ToolRefused(refused, sessionKey=target.display)
    return target


async def _limit_error(env: ToolEnv, ctx: ToolContext) -> str | None:
    """Decision D8: hop budget of the chain, then the source session's rolling-minute rate
    (counted across gateway processes, D29)."""
    limits = env.config.tools.sessions
    return hop_error(ctx, limits.hop_budget) or await env.send_limiter.acheck(ctx.session_key)


async def notify(env: ToolEnv, ctx: ToolContext, key: str, message: str) -> None:
    """`mode: "notify"` (D70): the message joins the target's transcript as inter-session
    context, read by its next turn; no turn starts and nothing is delivered."""
    entry = await env.store.get_session(key)
    if entry is None:
        entry = await env.ensure_session(key)
    sender = ctx.session_key.strip() or "unknown"
    note = TranscriptMessage.text(
        "user",
        f"[Inter-session message from {sender}; no reply expected]\n{message}",
        now_ms(),
        meta={"interSession": {"from": sender, "mode": "notify"}},
    )
    await env.store.append_messages(entry, [note])


async def sessions_send(
    env: ToolEnv, ctx: ToolContext, args: SessionsSendArgs
) -> SessionsSendResult | SessionsSendModeResult:
    message = required_text(args.message, "message")
    timeout = floor_clamp(args.timeout_seconds, default=DEFAULT_TIMEOUT, lo=0) or 0
    run_id = str(uuid.uuid4())
    vis = visibility_for(env, ctx)
    try:
        target = await _target(env, vis, args)
    except ToolRefused as refusal:  # every sessions_send result names its runId
        raise refusal.with_run_id(run_id) from None
    if (limited := await _limit_error(env, ctx)) is not None:
        log.warning("sessions_send from %s to %s refused: %s", ctx.session_key, target.key, limited)
        raise ToolRefused(limited, status="error", run_id=run_id, sessionKey=target.display)
    entry = await env.store.get_session(target.key)
    if args.mode == "notify":
        await notify(env, ctx, target.key, message)
        return SessionsSendModeResult(status="ok", mode="notify")
    steering = args.mode == "steer" and (await env.store.session_activity(target.key)).running > 0
    run_ctx = ctx.next_hop(
        target.key,
        env.keys.agent_of(target.key),
        origin=session_target(entry),
        sandboxed=env.is_sandboxed(target.key),
    )
    sender = ctx.session_key.strip() or "unknown"
    request = RunRequest(
        session_key=target.key,
        message=f"[Inter-session message from {sender}]\n{message}" if steering else message,
        context=run_ctx,
        extra_system_prompt=message_context(ctx.session_key.strip(), ctx.channel, target.display),
        deliver=False,
        lane=STEER_LANE if steering else LANE,  # D114: a running turn takes it in
        meta={"via": "sessions_send", "from": ctx.session_key},
        message_meta={"interSession": {"from": sender, "mode": "steer"}} if steering else None,
    )
    try:
        run = await env.start_run(request)
    except SendBlocked as exc:
        raise ToolRefused(
            str(exc), status="error", run_id=run_id, sessionKey=target.display
        ) from None
    except Exception as exc:  # a run that cannot be admitted is a result, not a crash
        log.warning("sessions_send into %s failed to start: %s", target.key, exc)
        raise ToolRefused(
            str(exc) or "error", status="error", run_id=run_id, sessionKey=target.display
        ) from None
    if steering:  # the running turn takes it in (D70, D75), or it is the next turn
        return SessionsSendModeResult(status="accepted", mode="steer", run_id=run.id)
    send = A2ASend(
        ctx=ctx,
        target_key=target.key,
        target_display=target.display,
        message=message,
        run_id=run.id,
        timeout_seconds=timeout,
    )
    from_own_turn = target.key == ctx.session_key and ctx.run_id is not None
    if timeout == 0 or from_own_turn:
        env.spawn(run_a2a_flow(env, send))
        return SessionsSendResult(
            run_id=run.id,
            status="accepted",
            session_key=target.display,
            delivery=dict(PENDING_ANNOUNCE),
        )
    outcome = await env.runs.wait(run.id, timeout)
    if outcome.status == "timeout":
        return _outcome(run.id, "timeout", outcome.error, target.display)
    if outcome.status != "ok":
        return _outcome(run.id, "error", outcome.error or "agent error", target.display)
    reply = await latest_assistant_reply(env, target.key, run.id)
    env.spawn(run_a2a_flow(env, replace(send, round_one_reply=reply)))
    return SessionsSendResult(
        run_id=run.id,
        status="ok",
        reply=reply,
        session_key=target.display,
        delivery=dict(PENDING_ANNOUNCE),
    )


SPEC = ToolSpec(
    name="sessions_send",
    description="Send a message into another session. Use sessionKey or label to identify the "
    "target.",
    args_model=SessionsSendArgs,
    handler=sessions_send,
    profiles=frozenset({"messaging"}),
    subagents=False,  # the sub-agent deny list (R4.7)
    mcp=True,
)
