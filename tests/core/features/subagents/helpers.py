"""Shared pieces of the sub-agent tests: a recording chat adapter and a scripted fake model.

The adapter is a fake at the network edge: it records what the outbound gate sends and feeds
inbound messages to the router exactly as a platform adapter would.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from core.api.testing import RecordingAdapter as BaseRecordingAdapter
from core.features.subagents.prompts import ANNOUNCE_USER_MESSAGE
from core.model.delivery_context import DeliveryContext
from core.runtime import Runtime
from core.store import TranscriptMessage
from core.store.subagents import SubagentRecord
from tests.fakes.model import (
    Reply,
    RequestJSON,
    last_message,
    last_user_text,
    system_text,
    text,
    tool_call,
)
from tests.polling import eventually as until

OWNER = "owner-1"
REQUESTER = "agent:main:main"
CHAT = "chat-1"
ORIGIN = DeliveryContext(channel="telegram", to=CHAT)


class RecordingAdapter(BaseRecordingAdapter):
    """The shared recording fake, on Telegram by default (sub-agent tests' requester chat)."""

    def __init__(self, channel: str = "telegram") -> None:
        super().__init__(channel)

    async def say(self, text: str, *, chat_id: str = CHAT, sender: str = OWNER) -> None:
        await super().say(text, chat_id=chat_id, sender=sender)


async def record_state(
    rt: Runtime, run_id: str, states: tuple[str, ...], timeout: float = 10.0
) -> SubagentRecord:
    """Wait until the record's announce state is one of `states`."""
    found: list[SubagentRecord] = []

    async def check() -> bool:
        rec = await rt.store.get_subagent_run(run_id)
        if rec is not None and rec.announce_state in states:
            found.append(rec)
            return True
        return False

    await until(check, timeout, f"announce state {states} of {run_id}")
    return found[-1]


async def transcript(rt: Runtime, key: str) -> list[TranscriptMessage]:
    entry = await rt.store.get_session(key)
    assert entry is not None, key
    return await rt.store.history(entry.session_id)


def is_child(req: RequestJSON) -> bool:
    return "# Subagent Context" in system_text(req) and last_user_text(req) != ANNOUNCE_USER_MESSAGE


def is_announce_step(req: RequestJSON) -> bool:
    return last_user_text(req) == ANNOUNCE_USER_MESSAGE


def after_tool_call(req: RequestJSON) -> bool:
    return last_message(req).get("role") == "tool"


ReplyFn = Callable[[RequestJSON], Reply | Awaitable[Reply]]


@dataclass
class Script:
    """Answers for the three parties: the requester agent, the child run, the announce step.

    By default the requester spawns once with `spawn_args` and then says "spawned"; the child
    answers `child`; the announce step answers `announce`.
    """

    spawn_args: dict[str, Any] = field(default_factory=lambda: {"task": "research things"})
    child: Reply | ReplyFn = field(default_factory=lambda: text("result text"))
    announce: Reply | ReplyFn = field(
        default_factory=lambda: text("Result: found 3 things\nNotes: - check X")
    )
    requester_text: str = "spawned"
    child_gate: asyncio.Event | None = None

    async def __call__(self, req: RequestJSON) -> Reply | None:
        if is_announce_step(req):
            return await _answer(self.announce, req)
        if is_child(req):
            if self.child_gate is not None:
                await self.child_gate.wait()
            return await _answer(self.child, req)
        if after_tool_call(req):
            return text(self.requester_text)
        if last_user_text(req).startswith("spawn"):
            return tool_call("sessions_spawn", self.spawn_args)
        return None


async def _answer(reply: Reply | ReplyFn, req: RequestJSON) -> Reply:
    if callable(reply):
        out = reply(req)
        return await out if asyncio.iscoroutine(out) else out  # type: ignore[return-value]
    return reply


OWNER_CONFIG: dict[str, Any] = {"channels": {"telegram": {"owners": [OWNER]}}}


async def spawn_tool(rt: Runtime, **args: Any) -> dict[str, Any]:
    """`sessions_spawn` called by the owner's main session, whose chat is ORIGIN."""
    entry = await rt.services.ensure_session(REQUESTER)
    ctx = rt.services.context_for(entry, origin=ORIGIN)
    return await rt.tools.invoke(rt.tool_env, "sessions_spawn", {"task": "x", **args}, ctx)
