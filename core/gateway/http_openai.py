"""OpenAI-compatible `POST /v1/chat/completions`: one agent turn in a named session (D9).

The session comes from the `x-crosstalk-session-key` header (default: main). Only the last
user message is new input; the session's own transcript is the history.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import uuid
from typing import Any

from aiohttp import web
from pydantic import BaseModel, ConfigDict, StrictBool, StrictStr, model_validator

from core.errors import SEND_BLOCKED, SendBlocked
from core.gateway.appkeys import RUNTIME
from core.gateway.http_api import error
from core.gateway.http_tools import authorized_model
from core.runs import RunRequest

SESSION_HEADER = "x-crosstalk-session-key"
_PRINTABLE_ASCII = re.compile(r"[ -~]*")


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


class ChatRequest(BaseModel):
    model_config = ConfigDict(extra="allow")
    model: StrictStr | None = None
    messages: list[ChatMessage]
    stream: StrictBool = False


def _text(content: str | list[ContentPart] | None) -> str:
    if isinstance(content, str):
        return content
    return "".join(p.text or "" for p in content or [] if p.type == "text")


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
    user = next((m for m in reversed(chat.messages)
                 if m.role == "user" and _text(m.content).strip()), None)
    if user is None:
        return error(400, "messages must contain a user message with text")
    raw_key = request.headers.get(SESSION_HEADER, "").strip()
    if not _PRINTABLE_ASCII.fullmatch(raw_key):
        return error(400, f"invalid session key: the {SESSION_HEADER} header must be "
                          "printable ASCII")
    key = rt.keys.main_session_key() if raw_key in ("", "main") else rt.keys.canonical(raw_key)
    entry = await rt.ensure_session(key)
    deltas: asyncio.Queue[str] = asyncio.Queue()

    async def on_delta(text: str) -> None:
        deltas.put_nowait(text)

    req = RunRequest(session_key=key, message=_text(user.content).strip(),
                     context=rt.context_for(entry), deliver=False, lane="main",
                     timeout_seconds=float(rt.config.agents.defaults.timeout_seconds),
                     on_delta=on_delta if chat.stream else None)
    try:
        run = await rt.start_run(req)
    except SendBlocked:
        return error(403, SEND_BLOCKED, "forbidden")
    model = chat.model or rt.models.default_ref(entry.agent_id) or "crosstalk"
    cid = f"chatcmpl-{uuid.uuid4().hex[:24]}"
    if not chat.stream:
        outcome = await rt.runs.wait(run.id, None)
        if outcome.status != "ok":
            return error(502, outcome.error or outcome.status, "agent_error")
        rec = await rt.store.get_run(run.id)
        usage = {"prompt_tokens": rec.input_tokens or 0 if rec else 0,
                 "completion_tokens": rec.output_tokens or 0 if rec else 0}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        return web.json_response(_completion(cid, model, outcome.reply or "", usage))
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
    if outcome.status == "ok" and final.startswith(sent) and len(final) > len(sent):
        await resp.write(_chunk(cid, model, {"content": final[len(sent):]}))
    elif outcome.status != "ok":
        await resp.write(_chunk(cid, model, {"content": f"[error: {outcome.error}]"}))
    await resp.write(_chunk(cid, model, {}, "stop" if outcome.status == "ok" else "error"))
    await resp.write(b"data: [DONE]\n\n")
    await resp.write_eof()
    return resp
