"""One agent turn for the OpenAI-compatible routes: start it, stream its text, read its usage.

Shared by `/v1/chat/completions` and `/v1/responses`, so both run turns the same way: the
request's new user text becomes the turn's input, its system/developer text the run's extra
system prompt, and the session transcript is the history (seeded from the request's earlier
messages when the session has none yet, D80).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from aiohttp import web

from core.edge.http.openai_errors import openai_error
from core.edge.http.openai_session import Exchange, seed
from core.edge.http.openai_target import Target
from core.engine.runs import RunRequest
from core.engine.runs.contract import RunOutcome
from core.model.errors import SEND_BLOCKED, SendBlocked
from core.store.inbound import Claim

if TYPE_CHECKING:
    from core.model.records import SessionEntry
    from core.runtime import Runtime


@dataclass(slots=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(slots=True)
class Turn:
    rt: Runtime
    run_id: str
    deltas: asyncio.Queue[str] = field(default_factory=asyncio.Queue)
    final: RunOutcome | None = None

    async def outcome(self) -> RunOutcome:
        if self.final is None:
            self.final = await self.rt.runs.wait(self.run_id, None)
        return self.final

    async def pieces(self) -> AsyncIterator[str]:
        """New text as it streams, then whatever the final reply adds; ends with the run."""
        sent = ""
        waiter = asyncio.ensure_future(self.outcome())
        try:
            while True:
                getter = asyncio.ensure_future(self.deltas.get())
                done, _ = await asyncio.wait({waiter, getter}, return_when=asyncio.FIRST_COMPLETED)
                if getter not in done:
                    getter.cancel()
                    break
                text = getter.result()
                if text.startswith(sent) and len(text) > len(sent):
                    yield text[len(sent) :]
                    sent = text
            final = waiter.result()
            if (
                final.status == "ok"
                and (reply := final.reply or "").startswith(sent)
                and len(reply) > len(sent)
            ):
                yield reply[len(sent) :]
        finally:
            waiter.cancel()

    async def usage(self) -> Usage:
        """The run's token counts: from its outcome when this process ran it, else the store."""
        outcome = self.final
        if outcome is not None and outcome.status == "ok" and outcome.input_tokens is not None:
            return Usage(outcome.input_tokens or 0, outcome.output_tokens or 0)
        rec = await self.rt.store.get_run(self.run_id)
        if rec is None:
            return Usage()
        return Usage(rec.input_tokens or 0, rec.output_tokens or 0)


async def start_turn(
    rt: Runtime,
    target: Target,
    text: str,
    extra_system_prompt: str | None,
    *,
    stream: bool,
    claims: tuple[Claim, ...] = (),
    earlier: Sequence[Exchange] = (),
) -> Turn | web.Response:
    """Admit the turn, or the 403 a denying send policy gives (D5), or the 429 of an agent's
    or session's limit (D64, D102).

    `claims` (an Idempotency-Key, D16) are stored with the message and the run; a repeat
    raises DuplicateInbound before anything runs. `earlier`, the client's conversation before
    this message, becomes the first messages of a session that has none (D80)."""
    if claims and await rt.store.is_known(claims):
        from core.store.inbound import DuplicateInbound

        raise DuplicateInbound()  # before the seed: a repeat stores nothing (D80)
    entry = await _ensure_session(rt, target)
    refusal = await rt.limits.on_api_arrival(entry.agent_id, entry.key)
    if refusal is not None:  # D102: nothing stored, nothing run
        return openai_error(429, refusal.text())
    await seed(rt.store, entry, earlier)
    deltas: asyncio.Queue[str] = asyncio.Queue()

    async def on_delta(piece: str) -> None:
        deltas.put_nowait(piece)

    req = RunRequest(
        session_key=target.session_key,
        message=text,
        context=rt.services.context_for(entry),
        deliver=False,
        lane="main",
        extra_system_prompt=extra_system_prompt or None,
        timeout_seconds=float(rt.config.agents.defaults.timeout_seconds),
        on_delta=on_delta if stream else None,
        claims=claims,
        model=target.model,
    )
    try:
        run = await rt.services.start_run(req, entry=entry)
    except SendBlocked:
        return openai_error(403, SEND_BLOCKED, "permission_error")
    return Turn(rt, run.id, deltas)


OPENAI_CHANNEL = "openai"
"""The channel of a session the OpenAI API made (D134): `sessions_list` and the console show
it, and a send-policy rule can match it (before, such sessions showed `unknown`)."""


async def _ensure_session(rt: Runtime, target: Target) -> SessionEntry:
    """The turn's session; one this request creates is an `openai` chat (the main session,
    reached with the header `main`, keeps being the web chat's)."""
    if target.session_key == rt.keys.main_session_key(target.agent_id):
        return await rt.services.ensure_session(target.session_key)
    return await rt.services.ensure_session(
        target.session_key, channel=OPENAI_CHANNEL, chat_type="direct"
    )


def failure_message(outcome: RunOutcome) -> str:
    return outcome.error or f"run ended with status {outcome.status}"


def failure_response(outcome: RunOutcome) -> web.Response:
    status = 504 if outcome.status == "timeout" else 502
    return openai_error(status, failure_message(outcome), "server_error", outcome.status)
