"""What the `sessions_search` tests (D66, D115, D116) share: stored messages said in a session,
a search through the tool as a given caller, the hits as (session, excerpt) pairs."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from core.model.tool_context import ToolContext
from core.runtime import Runtime
from core.store import TranscriptMessage, now_ms

MAIN = "agent:main:main"


async def ctx_for(
    rt: Runtime, key: str = MAIN, *, sandboxed: bool = False, role: str = "owner"
) -> ToolContext:
    entry = await rt.services.ensure_session(key)
    return replace(rt.services.context_for(entry), sandboxed=sandboxed, role=role)  # type: ignore[arg-type]


async def say(rt: Runtime, key: str, *texts: tuple[str, str], at: int | None = None) -> list[int]:
    entry = await rt.services.ensure_session(key)
    ts = at if at is not None else now_ms()
    msgs = [TranscriptMessage.text(role, body, ts) for role, body in texts]  # type: ignore[arg-type]
    return await rt.store.append_messages(entry, msgs)


async def search(rt: Runtime, ctx: ToolContext, **args: Any) -> dict[str, Any]:
    return await rt.tools.invoke(rt.tool_env, "sessions_search", args, ctx)


def found(out: dict[str, Any]) -> list[tuple[str, str]]:
    return [(r["sessionKey"], r["excerpt"]) for r in out["results"]]
