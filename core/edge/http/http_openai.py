"""OpenAI-compatible `POST /v1/chat/completions`: one agent turn in a session (D9, D14).

`model` picks the agent (or a configured model) and the header `x-crosstalk-session-key`, else
`user`, else the conversation the client resends, the session (see `openai_target`, D80). The
last user message is new input; `system`/`developer` messages become the run's extra system
prompt; the session's transcript is the history, seeded from the client's earlier messages when
the session has none. An SDK's automatic retry replays the first attempt (`openai_session`).
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from aiohttp import web
from pydantic import BaseModel, ConfigDict, StrictBool, StrictStr, model_validator

from core.edge.http import idempotency
from core.edge.http.appkeys import RUNTIME
from core.edge.http.http_tools import authorized_model
from core.edge.http.openai_errors import error_body, openai_error
from core.edge.http.openai_run import Usage, failure_message, failure_response, start_turn
from core.edge.http.openai_session import Exchange, retry_claim
from core.edge.http.openai_session import remember as remember_conversation
from core.edge.http.openai_target import SESSION_HEADER, named_user, resolve_target
from core.edge.http.sse import ClientStream
from core.model.errors import CrosstalkError
from core.store.inbound import Claim, DuplicateInbound

__all__ = ["SESSION_HEADER", "chat_completions"]


class ContentPart(BaseModel):
    """One part of a message's `content` list; a `text` part must carry a string `text`."""

    model_config = ConfigDict(extra="allow")
    type: StrictStr
    text: StrictStr | None = None

    @model_validator(mode="after")
    def _text_part_has_text(self) -> ContentPart:
        if self.type == "text" and self.text is None:
            raise ValueError("a text part needs a string 'text'")
        return self


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: StrictStr
    content: StrictStr | list[ContentPart] | None = None


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="allow")
    include_usage: bool = False


class ChatRequest(BaseModel):
    model_config = ConfigDict(extra="allow")
    model: StrictStr | None = None
    messages: list[ChatMessage]
    stream: StrictBool = False
    stream_options: StreamOptions | None = None
    user: StrictStr | None = None


def _text(content: str | list[ContentPart] | None) -> str:
    if isinstance(content, str):
        return content
    return "".join(p.text or "" for p in content or [] if p.type == "text")


def _usage(u: Usage) -> dict[str, int]:
    return {
        "prompt_tokens": u.input_tokens,
        "completion_tokens": u.output_tokens,
        "total_tokens": u.total_tokens,
    }


def _completion(cid: str, model: str, text: str, usage: Usage) -> dict[str, Any]:
    return {
        "id": cid,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
        "usage": _usage(usage),
    }


def _sse(body: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(body, ensure_ascii=False)}\n\n".encode()


def _chunk(
    cid: str,
    model: str,
    delta: dict[str, Any] | None,
    finish: str | None = None,
    usage: Usage | None = None,
) -> bytes:
    body: dict[str, Any] = {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [],
    }
    if delta is not None:
        body["choices"] = [{"index": 0, "delta": delta, "finish_reason": finish}]
    if usage is not None:
        body["usage"] = _usage(usage)
    return _sse(body)


def split_conversation(messages: list[ChatMessage]) -> tuple[list[Exchange], str, str] | None:
    """(earlier user/assistant messages, the new user text, the system prompt), or None when no
    user message has text. System and developer messages never count as conversation (D80)."""
    last = next((i for i in range(len(messages) - 1, -1, -1) if _is_user_text(messages[i])), None)
    if last is None:
        return None
    earlier: list[Exchange] = [
        (m.role, t)
        for m in messages[:last]
        if m.role in ("user", "assistant") and (t := _text(m.content).strip())
    ]
    system = "\n\n".join(
        t for m in messages if m.role in ("system", "developer") if (t := _text(m.content).strip())
    )
    return earlier, _text(messages[last].content).strip(), system


def _is_user_text(m: ChatMessage) -> bool:
    return m.role == "user" and bool(_text(m.content).strip())


async def chat_completions(request: web.Request) -> web.StreamResponse:
    parsed = await authorized_model(request, ChatRequest)
    if isinstance(parsed, web.Response):
        return parsed
    chat, raw = parsed
    rt = request.app[RUNTIME]
    split = split_conversation(chat.messages)
    if split is None:
        return openai_error(400, "messages must contain a user message with text")
    earlier, text, system = split
    try:
        claim = idempotency.claim_for(request, "chat.completions")
    except idempotency.BadKey as exc:
        return idempotency.bad_key(exc)
    if claim is None:  # an SDK's automatic retry finds its first attempt (D80)
        claim = await retry_claim(rt.store, request, "chat.completions", raw)
    if claim is not None and (again := await _replay(request, rt, claim, chat.stream)):
        return again
    target = await resolve_target(rt, request, chat.model, chat.user, earlier)
    if isinstance(target, web.Response):
        return target
    try:
        turn = await start_turn(
            rt,
            target,
            text,
            system,
            stream=chat.stream,
            claims=(claim,) if claim else (),
            earlier=earlier,
        )
    except DuplicateInbound:  # the same key, a moment earlier, on this or another process
        assert claim is not None
        return await _replay(request, rt, claim, chat.stream) or idempotency.conflict()
    if isinstance(turn, web.Response):
        return turn
    by_conversation = not request.headers.get(SESSION_HEADER) and named_user(chat.user) is None
    conversation = [*earlier, ("user", text)] if by_conversation else None
    model, cid = target.model_name, f"chatcmpl-{uuid.uuid4().hex[:24]}"
    if not chat.stream:
        outcome = await turn.outcome()
        if outcome.status != "ok":
            await _remember_failure(rt, claim, outcome)
            return failure_response(outcome)
        body = _completion(cid, model, outcome.reply or "", await turn.usage())
        await idempotency.remember(rt, claim, 200, body)
        await _remember_conversation(rt, target.session_key, conversation, outcome.reply)
        return web.json_response(body)
    resp = await ClientStream.open(request, "chat.completions stream")
    await resp.write(_chunk(cid, model, {"role": "assistant", "content": ""}))
    streamed = ""
    async for piece in turn.pieces():  # to the end even when the client left (D134)
        streamed += piece
        await resp.write(_chunk(cid, model, {"content": piece}))
    outcome = await turn.outcome()
    if outcome.status == "ok":
        await idempotency.remember(
            rt, claim, 200, _completion(cid, model, streamed, await turn.usage())
        )
        await _remember_conversation(rt, target.session_key, conversation, streamed)
        await resp.write(_chunk(cid, model, {}, "stop"))
        if chat.stream_options is not None and chat.stream_options.include_usage:
            await resp.write(_chunk(cid, model, None, usage=await turn.usage()))
    else:  # an error event, no made-up finish_reason (D14)
        await _remember_failure(rt, claim, outcome)
        await resp.write(_sse(error_body(failure_message(outcome), "server_error", outcome.status)))
    await resp.write(b"data: [DONE]\n\n")
    return await resp.end()


async def _remember_conversation(
    rt: Any, key: str, conversation: list[Exchange] | None, reply: str | None
) -> None:
    if conversation is not None:
        await remember_conversation(rt.store, key, [*conversation, ("assistant", reply or "")])


async def _remember_failure(rt: Any, claim: Claim | None, outcome: Any) -> None:
    status = 504 if outcome.status == "timeout" else 502
    await idempotency.remember(
        rt, claim, status, error_body(failure_message(outcome), "server_error", outcome.status)
    )


async def _after_first_attempt(rt: Any, claim: Claim) -> dict[str, Any] | None:
    """An SDK retry that overtook its first attempt (a client-side timeout) waits for that
    attempt's turn instead of getting a 409 it would retry again (D80)."""
    rec = await rt.store.get_claim(claim)
    if rec is None or rec.run_id is None or rec.run_id.startswith("boot:"):
        return None
    try:
        await rt.runs.wait(rec.run_id, float(rt.config.agents.defaults.timeout_seconds))
    except CrosstalkError:
        return None
    return await idempotency.first_response(rt, claim)


async def _replay(
    request: web.Request, rt: Any, claim: Claim, stream: bool
) -> web.StreamResponse | None:
    """A repeated Idempotency-Key: the first response (as a stream if this one streams)."""
    try:
        first = await idempotency.first_response(rt, claim)
    except LookupError:
        return None
    if first is None and claim.identity.startswith("sdk:"):
        first = await _after_first_attempt(rt, claim)
    if first is None:
        return idempotency.conflict()
    body, status = first["body"], int(first["status"])
    if not stream or status != 200:
        return web.json_response(body, status=status)
    resp = await ClientStream.open(request, "chat.completions replay")
    cid, model = str(body.get("id")), str(body.get("model"))
    text = str(body["choices"][0]["message"]["content"] or "")
    await resp.write(_chunk(cid, model, {"role": "assistant", "content": ""}))
    if text:
        await resp.write(_chunk(cid, model, {"content": text}))
    await resp.write(_chunk(cid, model, {}, "stop"))
    await resp.write(b"data: [DONE]\n\n")
    return await resp.end()
