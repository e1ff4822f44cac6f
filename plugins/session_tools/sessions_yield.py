"""`sessions_yield` (D69): end this turn now, with no reply, and go on when a sub-agent reports.

In an agent's turn a `{status: "yielded"}` answer ends the turn before its next model request
(nothing is delivered for it); the session's next turn is the next sub-agent announce, whose
text is that turn's input, or the next message, whichever comes first (D112). With none of the
caller's sub-agents running there is nothing to wait for: the error answer, and the turn goes
on. Over HTTP and MCP there is no turn to end; the answers and the wait are the same.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.api.plugins import ToolArgs, ToolContext, ToolSpec

if TYPE_CHECKING:
    from core.api.plugins import ToolEnv

NOTHING_TO_WAIT_FOR = "No sub-agent is running; nothing to wait for."


class SessionsYieldArgs(ToolArgs):
    """No arguments: the caller's own session yields, to its own sub-agents."""


async def sessions_yield(env: ToolEnv, ctx: ToolContext, args: SessionsYieldArgs) -> dict[str, Any]:
    if await env.subagents.yield_turn(ctx):
        return {"status": "yielded"}
    return {"status": "error", "error": NOTHING_TO_WAIT_FOR}


SPEC = ToolSpec(
    name="sessions_yield",
    description=(
        "End this turn now without replying and wait for your running sub-agents: the next "
        "sub-agent announce (or the user's next message) starts your next turn. Use it after "
        "sessions_spawn instead of polling. Errors when no sub-agent is running."
    ),
    args_model=SessionsYieldArgs,
    handler=sessions_yield,
    profiles=frozenset({"messaging"}),
    subagents=False,  # a session tool: the sub-agent deny list (R4.7)
    mcp=True,
    ends_turn=True,
)
