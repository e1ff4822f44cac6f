"""The latest assistant reply of a session, as `sessions_send` reports it (reference R3.2).

The target's reply is read back from its transcript rather than from the run outcome, so what
the requester sees is exactly what `sessions_history` shows; reasoning tags and tool-call
markup some models leak into text blocks are removed first. Unlike the reference, the reply is
looked up among the messages of the run that produced it (see `latest_assistant_reply`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from core.api.sessions import TranscriptMessage

if TYPE_CHECKING:
    from core.api.plugins import ToolEnv

HISTORY_WINDOW = 200

_THINKING = re.compile(
    r"<\s*(think|thinking|thought|antthinking|reasoning)\b[^>]*>.*?<\s*/\s*\1\s*>",
    re.IGNORECASE | re.DOTALL,
)
_UNCLOSED_THINKING = re.compile(
    r"<\s*(?:think|thinking|thought|antthinking|reasoning)\b[^>]*>.*\Z", re.IGNORECASE | re.DOTALL
)
_STRAY_CLOSE = re.compile(
    r"<\s*/\s*(?:think|thinking|thought|antthinking|reasoning)\s*>", re.IGNORECASE
)
_MINIMAX_TOOL_CALL = re.compile(
    r"<\s*minimax:tool_call\b[^>]*>.*?<\s*/\s*minimax:tool_call\s*>|"
    r"<\s*invoke\b[^>]*>.*?<\s*/\s*invoke\s*>",
    re.IGNORECASE | re.DOTALL,
)
_TOOL_CALL_MARKER = re.compile(r"\[Tool Call:[^\]\n]*?\(ID:[^)\n]*\)\]")
_PROVIDER_ERROR = re.compile(r'^\s*\{\s*"(?:type"\s*:\s*"error"|error"\s*:)', re.DOTALL)


def strip_block(text: str) -> str:
    """Remove reasoning tags, MiniMax tool-call XML and downgraded `[Tool Call: …]` markers."""
    out = _THINKING.sub("", text)
    out = _UNCLOSED_THINKING.sub("", out)
    out = _STRAY_CLOSE.sub("", out)
    out = _MINIMAX_TOOL_CALL.sub("", out)
    return _TOOL_CALL_MARKER.sub("", out)


def user_facing(text: str) -> str:
    """A raw provider error payload becomes a short sentence instead of JSON."""
    if _PROVIDER_ERROR.match(text):
        return "The model provider returned an error."
    return text


def assistant_text(content: list[dict[str, Any]]) -> str | None:
    """Join the text blocks (no separator) after stripping each; None when nothing is left."""
    parts = []
    for block in content:
        if block.get("type") != "text":
            continue
        cleaned = strip_block(str(block.get("text", "")))
        if cleaned.strip():
            parts.append(cleaned)
    joined = "".join(parts).strip()
    return user_facing(joined) if joined else None


def reply_of(messages: list[TranscriptMessage]) -> str | None:
    """The reply carried by the last message, when it is an assistant message."""
    if not messages or messages[-1].role != "assistant":
        return None
    return assistant_text(messages[-1].content)


async def latest_assistant_reply(
    env: ToolEnv, session_key: str, run_id: str | None = None
) -> str | None:
    """Reference R3.2: the last non-toolResult message, if it is assistant text.

    With `run_id`, only that run's messages count: runs queue per session and each stores its
    input when it is submitted, so the session's very last message may belong to a later run.
    """
    entry = await env.store.get_session(session_key)
    if entry is None:
        return None
    history = await env.store.history(entry.session_id, limit=HISTORY_WINDOW, include_tools=False)
    if run_id is not None:
        history = [m for m in history if m.run_id == run_id]
    return reply_of(history)
