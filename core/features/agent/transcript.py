"""Translate between our stored transcript (decision D3) and pydantic-ai messages."""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from core.model.attachments import text_with_placeholders
from core.model.text import clean_json, clean_text
from core.store import TranscriptMessage


def _ts(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


def _text(blocks: Sequence[dict[str, Any]]) -> str:
    return "".join(b.get("text", "") for b in blocks if b.get("type") == "text")


BUILT_LIMIT = 4096
"""Placed messages whose pydantic-ai form is kept (D57): about a hundred sessions' histories."""

_built: OrderedDict[tuple[int, int, str, int], tuple[TranscriptMessage, ModelMessage | None]] = (
    OrderedDict()
)


def to_model_messages(history: Sequence[TranscriptMessage]) -> list[ModelMessage]:
    """Stored messages → pydantic-ai history (tool results follow their call, as stored).

    A placed message never changes (D13), so its pydantic-ai form is built once and reused
    (D57); a trailing request is always built fresh, since pydantic-ai may add to the last
    request of a history it is given.
    """
    out: list[ModelMessage] = []
    last: TranscriptMessage | None = None  # the message behind out[-1]
    for m in history:
        built = _build(m) if m.id is None or m.seq is None else _cached(m)
        if built is not None:
            out.append(built)
            last = m
    if last is not None and isinstance(out[-1], ModelRequest):
        rebuilt = _build(last)
        assert rebuilt is not None  # a request is always built
        out[-1] = rebuilt
    return out


def _cached(m: TranscriptMessage) -> ModelMessage | None:
    assert m.id is not None and m.seq is not None
    key = (m.id, m.seq, m.role, m.timestamp)  # ids of different databases may meet in one process
    hit = _built.get(key)
    if hit is not None:
        source, built = hit
        if source is m or (
            source.content == m.content
            and source.tool_name == m.tool_name
            and source.tool_call_id == m.tool_call_id
        ):
            _built.move_to_end(key)
            return built
    built = _build(m)
    _built[key] = (m, built)
    if len(_built) > BUILT_LIMIT:
        _built.popitem(last=False)
    return built


def _build(m: TranscriptMessage) -> ModelMessage | None:
    if m.role == "user":
        return ModelRequest(
            parts=[
                UserPromptPart(
                    content=text_with_placeholders(m.content), timestamp=_ts(m.timestamp)
                )
            ]
        )
    if m.role == "assistant":
        parts: list[Any] = []
        for b in m.content:
            if b.get("type") == "text" and b.get("text"):
                parts.append(TextPart(content=b["text"]))
            elif b.get("type") == "toolCall":
                parts.append(
                    ToolCallPart(
                        tool_name=b["name"], args=b.get("arguments") or {}, tool_call_id=b["id"]
                    )
                )
        return ModelResponse(parts=parts, timestamp=_ts(m.timestamp)) if parts else None
    return ModelRequest(
        parts=[
            ToolReturnPart(
                tool_name=m.tool_name or "",
                content=_text(m.content),
                tool_call_id=m.tool_call_id or "",
                timestamp=_ts(m.timestamp),
            )
        ]
    )


def _tool_return_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return json.dumps(content, indent=2, ensure_ascii=False, default=str)


def from_model_messages(
    messages: Sequence[ModelMessage], *, now_ms: int, run_id: str
) -> list[TranscriptMessage]:
    """New pydantic-ai messages of a run → transcript rows (the user prompt is already stored).

    Model output is an edge (D12): its text, tool arguments and tool results are cleaned here.
    """
    out: list[TranscriptMessage] = []
    for msg in messages:
        if isinstance(msg, ModelResponse):
            blocks: list[dict[str, Any]] = []
            for part in msg.parts:
                if isinstance(part, TextPart) and part.content:
                    blocks.append({"type": "text", "text": clean_text(part.content)})
                elif isinstance(part, ToolCallPart):
                    blocks.append(
                        clean_json(
                            {
                                "type": "toolCall",
                                "id": part.tool_call_id,
                                "name": part.tool_name,
                                "arguments": part.args_as_dict(),
                            }
                        )
                    )
            if blocks:
                out.append(
                    TranscriptMessage(
                        role="assistant", content=blocks, timestamp=now_ms, run_id=run_id
                    )
                )
            continue
        for rpart in msg.parts:
            if isinstance(rpart, ToolReturnPart):
                payload = rpart.content
                is_error = isinstance(payload, dict) and payload.get("status") == "error"
                out.append(
                    TranscriptMessage(
                        role="toolResult",
                        content=[{"type": "text", "text": clean_text(_tool_return_text(payload))}],
                        timestamp=now_ms,
                        tool_call_id=clean_text(rpart.tool_call_id),
                        tool_name=clean_text(rpart.tool_name),
                        is_error=is_error,
                        run_id=run_id,
                    )
                )
    return out


def final_text(messages: Sequence[TranscriptMessage]) -> str | None:
    """The last assistant text of a run, or None when it said nothing."""
    for m in reversed(messages):
        if m.role == "assistant":
            text = m.plain_text().strip()
            if text:
                return text
    return None
