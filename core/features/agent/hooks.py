"""What a turn hooks into pydantic-ai: steers joining tool results, the streaming handler, and
the approval and steer wrappers of MCP toolsets.

Kept apart from the turn itself (core/features/agent/turn.py) so the turn reads as one story.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.features.agent.pause import mcp_server_of, requires_approval
from core.model.text import clean_text

if TYPE_CHECKING:
    from core.engine.runs.contract import DeltaSink
    from core.features.agent.env import TurnEnv

YIELDED_MARK = "(yielded)"
"""The text of the response that stands in for the model's next answer once a turn yielded
(D69; the turn's model wrapper answers it, D147): never sent to a model, never stored, never
delivered."""


async def with_steer(deps: Any, out: Any) -> Any:
    """A tool call's result, with what arrived meanwhile for a `steer` turn (D75) or from
    `sessions_send` (D114) as text of the request that carries it (D147).

    Every model request after the first carries tool results, and what was waiting when the turn
    started joined its first request already, so this is "before each model request" without a
    pydantic-ai capability: one would make pydantic-ai copy the run context at every hook of every
    run. A yielded turn takes nothing: no request follows, so it stays the session's next turn."""
    steer = deps.steer
    if steer is None or deps.yielded:
        return out
    texts = await steer()
    if not texts:
        return out
    from pydantic_ai import ToolReturn

    return ToolReturn(out, content="\n".join(texts))


def without_yield_mark(messages: list[Any]) -> list[Any]:
    """A yielded run's messages without the stand-in answer (:data:`YIELDED_MARK`)."""
    from pydantic_ai.messages import ModelResponse, TextPart

    last = messages[-1] if messages else None
    if (
        isinstance(last, ModelResponse)
        and len(last.parts) == 1
        and isinstance(last.parts[0], TextPart)
        and last.parts[0].content == YIELDED_MARK
    ):
        return messages[:-1]
    return messages


def mcp_toolset(toolset: Any, rt: TurnEnv) -> Any:
    """MCP tools take steers like ours (D147); under `tools.approvals.require` (`mcp:*`,
    `mcp:<server>`, names) they pause too."""
    from pydantic_ai.toolsets import WrapperToolset

    class Steered(WrapperToolset[Any]):
        async def call_tool(self, name: str, tool_args: Any, ctx: Any, tool: Any) -> Any:
            return await with_steer(ctx.deps, await super().call_tool(name, tool_args, ctx, tool))

    toolset = Steered(toolset)
    config = rt.config
    if not config.tools.approvals.require:
        return toolset
    return toolset.approval_required(
        lambda ctx, tool_def, _args: (
            not ctx.tool_call_approved
            and requires_approval(config, tool_def.name, mcp_server=mcp_server_of(tool_def.name))
        )
    )


def stream_handler(on_delta: DeltaSink) -> Any:
    from pydantic_ai.messages import PartDeltaEvent, PartStartEvent, TextPart, TextPartDelta

    async def handle(_ctx: Any, events: Any) -> None:
        text = ""
        async for event in events:
            if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
                text = event.part.content
            elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
                text += event.delta.content_delta
            else:
                continue
            if text:
                await on_delta(clean_text(text))  # D12: model output, cleaned as it streams

    return handle
