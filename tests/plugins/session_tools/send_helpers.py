"""What the `sessions_send` and agent-to-agent tests share: the session keys, a send from a
requester session, and what ran where.

Agents are the fake model: a responder scripts each session by the `Session: <key>` line of the
system prompt. "Nothing started" is asserted on the fake's requests and the store's transcripts.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
import uuid
from typing import Any

from core.runtime import Runtime
from core.store import TranscriptMessage
from tests.fakes.model import RequestJSON, system_text

MAIN = "agent:main:main"
REQ = "agent:main:discord:group:req"
TARGET = "agent:main:discord:group:target"
OTHER = "agent:other:main"
NO_A2A = {"session": {"agentToAgent": {"maxPingPongTurns": 0}}}


def session_of(req: RequestJSON) -> str:
    """The session a fake-model request belongs to (from the base system prompt)."""
    found = re.search(r"Session: (\S+) \(", system_text(req))
    return found.group(1) if found else ""


def is_announce(req: RequestJSON) -> bool:
    return "Agent-to-agent announce step:" in system_text(req)


def is_reply_step(req: RequestJSON) -> bool:
    return "Agent-to-agent reply step:" in system_text(req)


async def requester(rt: Runtime, key: str = REQ, **fields: Any) -> Any:
    """A requester session with a chat route, and its tool context."""
    if "discord:group" in key:
        chat = key.rsplit(":", 1)[1]
        fields = {
            "channel": "discord",
            "chat_type": "group",
            "last_channel": "discord",
            "last_to": f"channel:{chat}",
            **fields,
        }
    entry = await rt.services.ensure_session(key, **fields)
    return rt.services.context_for(entry)


async def send(
    rt: Runtime, args: dict[str, Any], key: str = REQ, **ctx_changes: Any
) -> dict[str, Any]:
    ctx = await requester(rt, key)
    if ctx_changes:
        ctx = dataclasses.replace(ctx, **ctx_changes)
    return await rt.tools.invoke(rt.tool_env, "sessions_send", args, ctx)


async def runs_in(rt: Runtime, key: str) -> list[TranscriptMessage]:
    """The user message of every run in a session (each run stores its input with its id)."""
    entry = await rt.store.get_session(key)
    if entry is None:
        return []
    return [m for m in await rt.store.history(entry.session_id) if m.role == "user" and m.run_id]


async def a2a_done(rt: Runtime, timeout: float = 20.0) -> None:
    """Wait until no background reply-back flow is left (flows may start further flows)."""
    async with asyncio.timeout(timeout):
        while flows := rt.background.named("run_a2a_flow"):
            await asyncio.gather(*flows)


def assert_uuid(value: object) -> None:
    assert isinstance(value, str)
    uuid.UUID(value)
