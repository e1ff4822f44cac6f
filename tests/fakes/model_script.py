"""Reply scripting and request helpers for the fake OpenAI-compatible model server.

Kept apart from the server (``tests/fakes/model.py``) so tests can build replies and inspect
recorded requests without caring how they go over the wire. The server re-exports everything
here, so tests normally import from ``tests.fakes.model`` only.

A *reply* says what the fake model answers to one ``POST /v1/chat/completions``:

* :func:`text` — an assistant message (streamed word by word unless ``chunks`` are given);
* :func:`tool_call` / :func:`tool_calls` — one or several function calls in one response;
* :func:`error` — an OpenAI-shaped error body with an HTTP status;
* :func:`delay` — another reply, sent only after a wait that a disconnect or ``stop()`` cuts short.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

DEFAULT_PROMPT_TOKENS = 10
"""Prompt tokens reported when a reply does not say: fixed so tests can assert run totals."""

DEFAULT_COMPLETION_TOKENS = 5
"""Completion tokens reported when a reply does not say."""

_call_ids = itertools.count(1)


@dataclass(frozen=True)
class Usage:
    """Token counts the fake reports for one reply (``usage`` of the completion)."""

    prompt_tokens: int = DEFAULT_PROMPT_TOKENS
    completion_tokens: int = DEFAULT_COMPLETION_TOKENS

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def as_json(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
        }


@dataclass(frozen=True)
class TextReply:
    """An assistant text message; ``chunks`` is how it is split when streamed."""

    content: str
    chunks: tuple[str, ...]
    usage: Usage = field(default_factory=Usage)
    finish_reason: str = "stop"
    pause_after: int | None = None
    """Streamed: hold the stream after this many chunks until ``FakeModelServer.resume()``."""


@dataclass(frozen=True)
class ToolCall:
    """One function call; ``arguments`` is the JSON string sent to the client."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class ToolCallsReply:
    """An assistant message with one or more tool calls (and optional leading text)."""

    calls: tuple[ToolCall, ...]
    content: str | None = None
    usage: Usage = field(default_factory=Usage)


@dataclass(frozen=True)
class ErrorReply:
    """An HTTP error in OpenAI's shape: ``{"error": {"message", "type", "param", "code"}}``."""

    status: int
    message: str
    type: str
    code: str | None = None
    retry: bool = False
    """Whether the OpenAI SDK may retry it (sent as ``x-should-retry``); off so one scripted
    error is one failure, whatever the status and the client's ``max_retries``."""

    def body(self) -> dict[str, Any]:
        return {
            "error": {"message": self.message, "type": self.type, "param": None, "code": self.code}
        }


@dataclass(frozen=True)
class DelayReply:
    """Wait ``seconds`` (cut short by client disconnect or server stop), then send ``reply``."""

    seconds: float
    reply: Reply


Reply: TypeAlias = TextReply | ToolCallsReply | ErrorReply | DelayReply
RequestJSON: TypeAlias = dict[str, Any]
Responder: TypeAlias = Callable[[RequestJSON], Reply | Awaitable[Reply | None] | None]
"""Chooses the reply from the request body; ``None`` falls through to the default echo."""


def _usage(prompt_tokens: int | None, completion_tokens: int | None) -> Usage:
    return Usage(
        prompt_tokens=DEFAULT_PROMPT_TOKENS if prompt_tokens is None else prompt_tokens,
        completion_tokens=(
            DEFAULT_COMPLETION_TOKENS if completion_tokens is None else completion_tokens
        ),
    )


def split_words(content: str) -> tuple[str, ...]:
    """Split into word-plus-trailing-space pieces, so streamed chunks rejoin exactly."""
    pieces = re.findall(r"\s*\S+\s*|\s+", content)
    return tuple(pieces) if pieces else (content,)


def split_args(arguments: str, parts: int = 3) -> tuple[str, ...]:
    """Split a JSON argument string into ``parts`` fragments (clients must reassemble them)."""
    if len(arguments) < parts:
        return (arguments,)
    size = -(-len(arguments) // parts)
    return tuple(arguments[i : i + size] for i in range(0, len(arguments), size))


def text(
    content: str,
    *,
    chunks: Sequence[str] | None = None,
    prompt_tokens: int | None = None,
    completion_tokens: int | None = None,
    finish_reason: str = "stop",
    pause_after: int | None = None,
) -> TextReply:
    """A text answer. ``chunks`` (must join to ``content``) fixes the streamed deltas;
    ``pause_after=n`` holds a streamed answer after ``n`` chunks until ``resume()``."""
    if chunks is None:
        pieces = split_words(content)
    else:
        pieces = tuple(chunks)
        if "".join(pieces) != content:
            raise ValueError("text(): chunks must join to content")
    return TextReply(
        content=content,
        chunks=pieces,
        usage=_usage(prompt_tokens, completion_tokens),
        finish_reason=finish_reason,
        pause_after=pause_after,
    )


STREAMED_TEXT = "Hello there, a streamed answer."


def held_stream() -> TextReply:
    """:data:`STREAMED_TEXT` streamed in three chunks, held after the first until ``resume()``:
    a preview is out and the final reply is not, for as long as a test needs."""
    return text(STREAMED_TEXT, chunks=["Hello ", "there, ", "a streamed answer."], pause_after=1)


def tool_call(
    name: str,
    args: Mapping[str, Any] | str | None = None,
    id: str | None = None,
    *,
    content: str | None = None,
    prompt_tokens: int | None = None,
    completion_tokens: int | None = None,
) -> ToolCallsReply:
    """One tool call. ``args`` as a dict (JSON-encoded) or a raw string (e.g. broken JSON)."""
    arguments = args if isinstance(args, str) else json.dumps(dict(args or {}))
    call = ToolCall(id=id or f"call_{next(_call_ids)}", name=name, arguments=arguments)
    return ToolCallsReply(
        calls=(call,), content=content, usage=_usage(prompt_tokens, completion_tokens)
    )


def tool_calls(
    *replies: ToolCallsReply,
    content: str | None = None,
    prompt_tokens: int | None = None,
    completion_tokens: int | None = None,
) -> ToolCallsReply:
    """Several tool calls in one response: ``tool_calls(tool_call("a"), tool_call("b"))``."""
    if not replies:
        raise ValueError("tool_calls() needs at least one tool_call()")
    calls = tuple(call for reply in replies for call in reply.calls)
    return ToolCallsReply(
        calls=calls, content=content, usage=_usage(prompt_tokens, completion_tokens)
    )


_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    409: "conflict_error",
    413: "request_too_large",
    422: "invalid_request_error",
    429: "rate_limit_error",
}


def error(
    status: int,
    message: str,
    *,
    type: str | None = None,
    code: str | None = None,
    retry: bool = False,
) -> ErrorReply:
    """An OpenAI-style error. ``type`` defaults from the status (5xx → ``server_error``)."""
    default_type = "server_error" if status >= 500 else _ERROR_TYPES.get(status, "api_error")
    return ErrorReply(
        status=status, message=message, type=type or default_type, code=code, retry=retry
    )


def delay(seconds: float, reply: Reply) -> DelayReply:
    """Answer ``reply`` after ``seconds``; for client timeout tests (never blocks ``stop()``)."""
    return DelayReply(seconds=seconds, reply=reply)


# -- request helpers -----------------------------------------------------------------------


def content_text(content: Any) -> str:
    """Text of a message ``content``: a string, or the text parts of a content-part list."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    return str(content)


def messages(request: RequestJSON) -> list[dict[str, Any]]:
    """The request's ``messages`` list (empty if missing or malformed)."""
    found = request.get("messages")
    return [m for m in found if isinstance(m, dict)] if isinstance(found, list) else []


def last_user_text(request: RequestJSON) -> str:
    """Text of the last ``role=user`` message ("" if none) — what most responders key on."""
    for message in reversed(messages(request)):
        if message.get("role") == "user":
            return content_text(message.get("content"))
    return ""


def system_text(request: RequestJSON) -> str:
    """All ``system``/``developer`` message texts joined by blank lines (agent identity lives
    here, so a responder can tell several agents sharing one fake apart)."""
    return "\n\n".join(
        content_text(m.get("content"))
        for m in messages(request)
        if m.get("role") in ("system", "developer")
    )


def tool_results(request: RequestJSON) -> list[dict[str, Any]]:
    """The ``role=tool`` messages (``tool_call_id``, ``content``) in request order."""
    return [m for m in messages(request) if m.get("role") == "tool"]


def last_message(request: RequestJSON) -> dict[str, Any]:
    """The final message of the request ({} if none): tells a first turn from a tool follow-up."""
    found = messages(request)
    return found[-1] if found else {}


def tool_names(request: RequestJSON) -> list[str]:
    """Names of the function tools the client offered in this request."""
    tools = request.get("tools")
    if not isinstance(tools, list):
        return []
    return [
        str(t["function"]["name"])
        for t in tools
        if isinstance(t, dict) and isinstance(t.get("function"), dict) and "name" in t["function"]
    ]


def echo(request: RequestJSON) -> TextReply:
    """The default reply: ``"echo: <last user text>"``."""
    return text(f"echo: {last_user_text(request)}")


class HoldFirst:
    """A responder whose first answer waits for `release`: a model still thinking while the
    test sets the scene (however slow the machine), then the other answers in order (the
    last one again if asked more often, so extra requests show up in the test's counts)."""

    def __init__(self, first: Reply, *rest: Reply) -> None:
        self.answers = [first, *rest]
        self.release = asyncio.Event()
        self.calls = 0

    async def __call__(self, request: RequestJSON) -> Reply:
        self.calls += 1
        if self.calls == 1:
            await self.release.wait()
        return self.answers[min(self.calls, len(self.answers)) - 1]
