"""The agent-to-agent reply-back loop of `sessions_send` (reference R3.3–R3.5).

After the tool has answered, a background flow lets the two sessions talk back and forth for up
to `session.agentToAgent.maxPingPongTurns` turns, then asks the target to announce the outcome
to its own chat through the outbound gate. Every step is an ordinary persisted run (so
`sessions_history` shows it) with `deliver=False` on the `nested` lane and the same trace as the
send, so the hop budget (D8) bounds it too. Nothing here raises: failures are logged.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.api.plugins import SendBlocked, ToolContext
from core.api.sessions import DeliveryContext, Outbound, RunRequest, session_target
from plugins.session_tools.announce_target import resolve_announce_target
from plugins.session_tools.reply_text import latest_assistant_reply

if TYPE_CHECKING:
    from core.api.plugins import ToolEnv

log = logging.getLogger(__name__)

REPLY_SKIP = "REPLY_SKIP"
ANNOUNCE_SKIP = "ANNOUNCE_SKIP"
ANNOUNCE_MESSAGE = "Agent-to-agent announce step."
DEFAULT_MAX_TURNS, MAX_TURNS_CAP = 5, 5
DEFAULT_ANNOUNCE_TIMEOUT, MAX_STEP_WAIT = 30.0, 60.0
LANE = "nested"


@dataclass(frozen=True, slots=True)
class A2ASend:
    """One `sessions_send` whose reply-back flow runs in the background."""

    ctx: ToolContext
    """The requester's tool context: identity, trace and hop count of every step."""
    target_key: str
    target_display: str
    message: str
    run_id: str
    timeout_seconds: int
    round_one_reply: str | None = None

    @property
    def requester_key(self) -> str:
        return self.ctx.session_key.strip()

    @property
    def announce_timeout(self) -> float:
        return float(self.timeout_seconds) if self.timeout_seconds > 0 else DEFAULT_ANNOUNCE_TIMEOUT

    @property
    def step_wait(self) -> float:
        return min(self.announce_timeout, MAX_STEP_WAIT)


def max_ping_pong_turns(env: ToolEnv) -> int:
    raw: object = env.config.session.agent_to_agent.max_ping_pong_turns
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not math.isfinite(raw):
        return DEFAULT_MAX_TURNS
    return min(MAX_TURNS_CAP, max(0, math.floor(raw)))


# ---- injected contexts (R3.3) --------------------------------------------------------------


def _requester_lines(requester_key: str, requester_channel: str | None) -> list[str]:
    lines = []
    if requester_key:
        lines.append(f"Agent 1 (requester) session: {requester_key}.")
    if requester_channel:
        lines.append(f"Agent 1 (requester) channel: {requester_channel}.")
    return lines


def message_context(requester_key: str, requester_channel: str | None, target_display: str) -> str:
    """The primary run's extra system prompt."""
    return "\n".join(
        [
            "Agent-to-agent message context:",
            *_requester_lines(requester_key, requester_channel),
            f"Agent 2 (target) session: {target_display}.",
        ]
    )


def reply_context(
    send: A2ASend, *, requester_turn: bool, turn: int, max_turns: int, target_channel: str
) -> str:
    who = "Agent 1 (requester)" if requester_turn else "Agent 2 (target)"
    return "\n".join(
        [
            "Agent-to-agent reply step:",
            f"Current agent: {who}.",
            f"Turn {turn} of {max_turns}.",
            *_requester_lines(send.requester_key, send.ctx.channel),
            f"Agent 2 (target) session: {send.target_display}.",
            f"Agent 2 (target) channel: {target_channel}.",
            f'If you want to stop the ping-pong, reply exactly "{REPLY_SKIP}".',
        ]
    )


def announce_context(
    send: A2ASend, *, target_channel: str, round_one: str | None, latest: str | None
) -> str:
    return "\n".join(
        [
            "Agent-to-agent announce step:",
            *_requester_lines(send.requester_key, send.ctx.channel),
            f"Agent 2 (target) session: {send.target_display}.",
            f"Agent 2 (target) channel: {target_channel}.",
            f"Original request: {send.message}",
            f"Round 1 reply: {round_one}" if round_one else "Round 1 reply: (not available).",
            f"Latest reply: {latest}" if latest else "Latest reply: (not available).",
            f'If you want to remain silent, reply exactly "{ANNOUNCE_SKIP}".',
            "Any other reply will be posted to the target channel.",
            "After this reply, the agent-to-agent conversation is over.",
        ]
    )


# ---- the flow (R3.4) -----------------------------------------------------------------------


async def run_step(
    env: ToolEnv, send: A2ASend, session_key: str, message: str, extra: str
) -> tuple[str | None, str | None]:
    """One A2A run in `session_key`: (its reply text or None, its run id or None)."""
    entry = await env.store.get_session(session_key)
    ctx = send.ctx.next_hop(
        session_key,
        env.keys.agent_of(session_key),
        origin=session_target(entry),
        sandboxed=env.is_sandboxed(session_key),
    )
    try:
        run = await env.start_run(
            RunRequest(
                session_key=session_key,
                message=message,
                context=ctx,
                extra_system_prompt=extra,
                deliver=False,
                lane=LANE,
                meta={"a2a": send.run_id},
            )
        )
    except SendBlocked as exc:
        log.info("a2a step in %s not started: %s", session_key, exc)
        return None, None
    outcome = await env.runs.wait(run.id, send.step_wait)
    if outcome.status != "ok":
        log.info(
            "a2a step %s in %s ended %s: %s", run.id, session_key, outcome.status, outcome.error
        )
        return None, run.id
    return await latest_assistant_reply(env, session_key, run.id), run.id


async def _primary_reply(env: ToolEnv, send: A2ASend) -> str | None:
    if send.round_one_reply:
        return send.round_one_reply
    outcome = await env.runs.wait(send.run_id, send.step_wait)
    if outcome.status != "ok":
        log.info("a2a flow of %s stops: primary run ended %s", send.run_id, outcome.status)
        return None
    return await latest_assistant_reply(env, send.target_key, send.run_id)


async def _ping_pong(env: ToolEnv, send: A2ASend, first: str, target_channel: str) -> str:
    """Alternate requester/target turns; returns the latest reply worth announcing."""
    max_turns = max_ping_pong_turns(env)
    if max_turns <= 0 or not send.requester_key or send.requester_key == send.target_key:
        return first
    latest = incoming = first
    for turn in range(1, max_turns + 1):
        requester_turn = turn % 2 == 1
        key = send.requester_key if requester_turn else send.target_key
        extra = reply_context(
            send,
            requester_turn=requester_turn,
            turn=turn,
            max_turns=max_turns,
            target_channel=target_channel,
        )
        text, _ = await run_step(env, send, key, incoming, extra)
        if not text or not text.strip() or text.strip() == REPLY_SKIP:
            break
        latest = incoming = text
    return latest


async def _announce(
    env: ToolEnv, send: A2ASend, target: DeliveryContext | None, round_one: str, latest: str
) -> None:
    channel = (target.channel if target else None) or "unknown"
    extra = announce_context(send, target_channel=channel, round_one=round_one, latest=latest)
    text, run_id = await run_step(env, send, send.target_key, ANNOUNCE_MESSAGE, extra)
    reply = (text or "").strip()
    if not reply or reply == ANNOUNCE_SKIP:
        log.info("a2a announce of %s skipped (%s)", send.run_id, reply or "no reply")
        return
    if target is None:
        log.info(
            "a2a announce of %s not posted: %s has no announce target", send.run_id, send.target_key
        )
        return
    result = await env.gate.deliver(
        Outbound(reply, "announce", send.target_key, target=target, run_id=run_id)
    )
    if not result.delivered:
        log.warning(
            "a2a announce of %s to %s:%s %s: %s",
            send.run_id,
            target.channel,
            target.to,
            result.outcome,
            result.reason,
        )


async def run_a2a_flow(env: ToolEnv, send: A2ASend) -> None:
    """The whole background flow; never raises."""
    try:
        round_one = await _primary_reply(env, send)
        if not round_one:
            return
        target = await resolve_announce_target(env, send.target_key)
        channel = (target.channel if target else None) or "unknown"
        latest = await _ping_pong(env, send, round_one, channel)
        await _announce(env, send, target, round_one, latest)
    except Exception:
        log.exception("a2a flow of %s failed", send.run_id)
