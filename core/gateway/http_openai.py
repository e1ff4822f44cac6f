"""OpenAI-compatible `POST /v1/chat/completions`: one agent turn in a named session (D9).

The session comes from the `x-crosstalk-session-key` header (default: main). Only the last
user message is new input; the session's own transcript is the history.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from typing import Any

from aiohttp import web
from pydantic import BaseModel, ConfigDict

from core.errors import SEND_BLOCKED, SendBlocked
from core.gateway import idempotency
from core.gateway.appkeys import RUNTIME
from core.gateway.http_api import error
from core.gateway.http_tools import authorized_model
from core.runs import RunRequest
from core.store.ledger import Claim, DuplicateInbound

SESSION_HEADER = "x-crosstalk-session-key"


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: str
    content: str | list[dict[str, Any]] | None = None


class ChatRequest(BaseModel):
    model_config = ConfigDict(extra="allow")
    model: str | None = None
    messages: list[ChatMessage]
    stream: bool = False


def _text(content: str | list[dict[str, Any]] | None) -> str:
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content or [] if p.get("type") == "text")


def _completion(cid: str, model: str, text: str, usage: dict[str, int]) -> dict[str, Any]:
    return {"id": cid, "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": "stop"}], "usage": usage}


def _chunk(cid: str, model: str, delta: dict[str, Any], finish: str | None = None
           ) -> bytes:
    body = {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()),
            "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return f"data: {json.dumps(body, ensure_ascii=False)}\n\n".encode()


async def chat_completions(request: web.Request) -> web.StreamResponse:
    parsed = await authorized_model(request, ChatRequest)
    if isinstance(parsed, web.Response):
        return parsed
    chat, _ = parsed
    rt = request.app[RUNTIME]
    user = next((m for m in reversed(chat.messages) if m.role == "user"), None)
    if user is None or not _text(user.content).strip():
        return error(400, "messages must contain a user message with text")
    try:
        claim = idempotency.claim_for(request, "chat.completions")
    except idempotency.BadKey as exc:
        return idempotency.bad_key(exc)
    if claim is not None and (again := await _replay(request, rt, claim, chat.stream)):
        return again
    raw_key = request.headers.get(SESSION_HEADER, "").strip()
    key = rt.keys.main_session_key() if raw_key in ("", "main") else rt.keys.canonical(raw_key)
    entry = await rt.ensure_session(key)
    deltas: asyncio.Queue[str] = asyncio.Queue()

    async def on_delta(text: str) -> None:
        deltas.put_nowait(text)

    req = RunRequest(session_key=key, message=_text(user.content).strip(),
                     context=rt.context_for(entry), deliver=False, lane="main",
                     timeout_seconds=float(rt.config.agents.defaults.timeout_seconds),
                     on_delta=on_delta if chat.stream else None,
                     claims=(claim,) if claim is not None else ())
    try:
        run = await rt.start_run(req)
    except SendBlocked:
        return error(403, SEND_BLOCKED, "forbidden")
    except DuplicateInbound:  # the same key, a moment earlier, on this or another process
        assert claim is not None
        return await _replay(request, rt, claim, chat.stream) or idempotency.conflict()
    model = chat.model or rt.models.default_ref(entry.agent_id) or "crosstalk"
    cid = f"chatcmpl-{uuid.uuid4().hex[:24]}"
    if not chat.stream:
        outcome = await rt.runs.wait(run.id, None)
        if outcome.status != "ok":
            failed = {"error": {"message": outcome.error or outcome.status,
                                "type": "agent_error"}}
            await idempotency.remember(rt, claim, 502, failed)
            return web.json_response(failed, status=502)
        body = await _final_body(rt, run.id, cid, model, outcome.reply or "")
        await idempotency.remember(rt, claim, 200, body)
        return web.json_response(body)
    resp = web.StreamResponse(headers={"Content-Type": "text/event-stream",
                                       "Cache-Control": "no-cache"})
    await resp.prepare(request)
    await resp.write(_chunk(cid, model, {"role": "assistant", "content": ""}))
    sent = ""
    waiter = asyncio.ensure_future(rt.runs.wait(run.id, None))
    while True:
        getter = asyncio.ensure_future(deltas.get())
        done, _ = await asyncio.wait({waiter, getter}, return_when=asyncio.FIRST_COMPLETED)
        if getter in done:
            text = getter.result()
            if text.startswith(sent) and len(text) > len(sent):
                await resp.write(_chunk(cid, model, {"content": text[len(sent):]}))
                sent = text
            continue
        getter.cancel()
        break
    outcome = waiter.result()
    final = outcome.reply or ""
    if outcome.status == "ok":
        await idempotency.remember(rt, claim, 200, await _final_body(rt, run.id, cid, model, final))
    else:
        await idempotency.remember(rt, claim, 502, {"error": {
            "message": outcome.error or outcome.status, "type": "agent_error"}})
    if outcome.status == "ok" and final.startswith(sent) and len(final) > len(sent):
        await resp.write(_chunk(cid, model, {"content": final[len(sent):]}))
    elif outcome.status != "ok":
        await resp.write(_chunk(cid, model, {"content": f"[error: {outcome.error}]"}))
    await resp.write(_chunk(cid, model, {}, "stop" if outcome.status == "ok" else "error"))
    await resp.write(b"data: [DONE]\n\n")
    await resp.write_eof()
    return resp


async def _final_body(rt: Any, run_id: str, cid: str, model: str, reply: str) -> dict[str, Any]:
    rec = await rt.store.get_run(run_id)
    usage = {"prompt_tokens": rec.input_tokens or 0 if rec else 0,
             "completion_tokens": rec.output_tokens or 0 if rec else 0}
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    return _completion(cid, model, reply, usage)


async def _replay(request: web.Request, rt: Any, claim: Claim, stream: bool
                  ) -> web.StreamResponse | None:
    """A repeated Idempotency-Key: the first response (as a stream if this one streams)."""
    try:
        first = await idempotency.first_response(rt, claim)
    except LookupError:
        return None
    if first is None:
        return idempotency.conflict()
    body, status = first["body"], int(first["status"])
    if not stream or status != 200:
        return web.json_response(body, status=status)
    resp = web.StreamResponse(headers={"Content-Type": "text/event-stream",
                                       "Cache-Control": "no-cache"})
    await resp.prepare(request)
    cid, model = str(body.get("id")), str(body.get("model"))
    text = str(body["choices"][0]["message"]["content"] or "")
    await resp.write(_chunk(cid, model, {"role": "assistant", "content": ""}))
    if text:
        await resp.write(_chunk(cid, model, {"content": text}))
    await resp.write(_chunk(cid, model, {}, "stop"))
    await resp.write(b"data: [DONE]\n\n")
    await resp.write_eof()
    return resp
