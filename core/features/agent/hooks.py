"""What a turn hooks into pydantic-ai: capabilities that run before each model request, the
streaming handler, and the approval wrapper of MCP toolsets.

Kept apart from the turn itself (core/features/agent/turn.py) so the turn reads as one story.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.features.agent.pause import mcp_server_of, requires_approval
from core.model.text import clean_text

if TYPE_CHECKING:
    from core.engine.runs.manager import DeltaSink
    from core.features.agent.env import TurnEnv

YIELDED_MARK = "(yielded)"
"""The text of the response that stands in for the model's next answer once a turn yielded
(D69): never sent to a model, never stored, never delivered."""


def steer_capability() -> Any:
    """Before each model request of a `steer` turn, what arrived meanwhile joins it (D75): the
    texts go into the request and into the run's messages (so later requests keep them)."""
    from pydantic_ai.capabilities import AbstractCapability
    from pydantic_ai.messages import ModelRequest, UserPromptPart

    class SteerIn(AbstractCapability[Any]):
        async def before_model_request(self, ctx: Any, request_context: Any) -> Any:
            steer = ctx.deps.steer
            texts = await steer() if steer is not None else []
            if texts:
                request = ModelRequest(parts=[UserPromptPart("\n".join(texts))])
                request_context.messages = [*request_context.messages, request]
                ctx.messages.append(request)
            return request_context

    return SteerIn()


def yield_capability() -> Any:
    """Once a tool call yielded the turn (`sessions_yield`, D69), the next model request is
    not made: the run ends there, with a stand-in answer the turn drops (no reply)."""
    from pydantic_ai.capabilities import AbstractCapability
    from pydantic_ai.exceptions import SkipModelRequest
    from pydantic_ai.messages import ModelResponse, TextPart

    class YieldStop(AbstractCapability[Any]):
        async def before_model_request(self, ctx: Any, request_context: Any) -> Any:
            if ctx.deps.yielded:
                raise SkipModelRequest(ModelResponse(parts=[TextPart(YIELDED_MARK)]))
            return request_context

    return YieldStop()


def without_yield_mark(messages: list[Any]) -> list[Any]:
    """A yielded run's messages without the stand-in answer of :func:`yield_capability`."""
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
    """MCP tools under `tools.approvals.require` (`mcp:*`, `mcp:<server>`, names) pause too."""
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
