"""OpenAI-compatible `POST /v1/responses` (plain and streaming), for Responses-only clients.

Same turn rules as chat completions (D14, D80): `model` picks the agent, the session header,
else `user`, else the conversation the input items hold, the session; `instructions` and
system/developer input items become the run's extra system prompt; the last user input item is
the new message, the user and assistant items before it the client's earlier conversation.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from typing import Any

from aiohttp import web
from pydantic import BaseModel, ConfigDict, StrictBool, StrictStr

from core.edge.http.appkeys import RUNTIME
from core.edge.http.http_tools import authorized_model
from core.edge.http.openai_errors import openai_error
from core.edge.http.openai_run import Usage, failure_message, failure_response, start_turn
from core.edge.http.openai_session import Exchange, remember
from core.edge.http.openai_target import SESSION_HEADER, named_user, resolve_target
from core.edge.http.sse import ClientStream
from core.engine.runs.contract import RunOutcome


class ResponsesRequest(BaseModel):
    model_config = ConfigDict(extra="allow")
    model: StrictStr | None = None
    input: StrictStr | list[dict[str, Any]]
    instructions: StrictStr | None = None
    stream: StrictBool = False
    user: StrictStr | None = None
    previous_response_id: StrictStr | None = None


RESPONSE_ID = re.compile(r"resp_([0-9a-f]{32})")
"""A response's id is its run's (D194): `resp_` and the run id's 32 hex digits."""


def response_id(run_id: str) -> str:
    return f"resp_{uuid.UUID(run_id).hex}"


async def continued_session(request: web.Request, previous: str) -> str | web.Response:
    """The session of the response `previous` names (its run's), or OpenAI's 404 (D194)."""
    m = RESPONSE_ID.fullmatch(previous.strip())
    run = await request.app[RUNTIME].store.get_run(str(uuid.UUID(m.group(1)))) if m else None
    if run is None:
        return openai_error(
            404,
            f"Previous response with id '{previous[:100]}' not found.",
            "invalid_request_error",
            "previous_response_not_found",
        )
    return run.session_key


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(
        str(p.get("text", ""))
        for p in content
        if isinstance(p, dict) and p.get("type") in ("input_text", "text", "output_text")
    )


def split_input(req: ResponsesRequest) -> tuple[list[Exchange], str, str]:
    """(earlier user/assistant messages, new user text, extra system prompt) of a request."""
    system = [req.instructions.strip()] if req.instructions and req.instructions.strip() else []
    if isinstance(req.input, str):
        return [], req.input.strip(), "\n\n".join(system)
    said: list[Exchange] = []
    for item in req.input:
        if item.get("type", "message") != "message":
            continue
        text = _content_text(item.get("content")).strip()
        if item.get("role") in ("system", "developer") and text:
            system.append(text)
        elif item.get("role") in ("user", "assistant") and text:
            said.append((str(item["role"]), text))
    last = next((i for i in range(len(said) - 1, -1, -1) if said[i][0] == "user"), None)
    if last is None:
        return [], "", "\n\n".join(system)
    return said[:last], said[last][1], "\n\n".join(system)


class _Response:
    """Builds the `response` object and its stream events, numbered in order."""

    def __init__(self, model: str, instructions: str | None, run_id: str) -> None:
        self.id = response_id(run_id)
        self.msg_id = f"msg_{uuid.uuid4().hex}"
        self.model, self.instructions = model, instructions
        self.created_at = int(time.time())
        self.seq = 0

    def message(self, text: str, status: str) -> dict[str, Any]:
        content = [{"type": "output_text", "text": text, "annotations": []}]
        return {
            "type": "message",
            "id": self.msg_id,
            "status": status,
            "role": "assistant",
            "content": content,
        }

    def body(
        self,
        status: str,
        output: list[dict[str, Any]],
        usage: Usage | None = None,
        error: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "response",
            "created_at": self.created_at,
            "status": status,
            "model": self.model,
            "output": output,
            "error": error,
            "incomplete_details": None,
            "instructions": self.instructions,
            "metadata": {},
            "parallel_tool_calls": False,
            "tool_choice": "auto",
            "tools": [],
            "temperature": None,
            "top_p": None,
            "usage": None
            if usage is None
            else {
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "total_tokens": usage.total_tokens,
                "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                "output_tokens_details": {"reasoning_tokens": 0},
            },
        }

    def event(self, type_: str, **fields: Any) -> bytes:
        data = {"type": type_, "sequence_number": self.seq, **fields}
        self.seq += 1
        return f"event: {type_}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()

    def text_event(self, type_: str, **fields: Any) -> bytes:
        """An event of the one message's one text part (output 0, content 0)."""
        return self.event(type_, item_id=self.msg_id, output_index=0, content_index=0, **fields)


def _failure(outcome: RunOutcome) -> dict[str, str]:
    return {"code": "server_error", "message": failure_message(outcome)}


async def create_response(request: web.Request) -> web.StreamResponse:
    parsed = await authorized_model(request, ResponsesRequest)
    if isinstance(parsed, web.Response):
        return parsed
    req, _ = parsed
    rt = request.app[RUNTIME]
    earlier, text, system = split_input(req)
    if not text:
        return openai_error(400, "input must contain a user message with text")
    continued: str | None = None
    if req.previous_response_id is not None:
        found = await continued_session(request, req.previous_response_id)
        if isinstance(found, web.Response):
            return found
        continued = found
    target = await resolve_target(rt, request, req.model, req.user, earlier, continued)
    if isinstance(target, web.Response):
        return target
    turn = await start_turn(rt, target, text, system, stream=req.stream, earlier=earlier)
    if isinstance(turn, web.Response):
        return turn
    by_conversation = (
        not request.headers.get(SESSION_HEADER) and named_user(req.user) is None and not continued
    )
    said = [*earlier, ("user", text)] if by_conversation else None
    r = _Response(target.model_name, req.instructions, turn.run_id)
    if not req.stream:
        outcome = await turn.outcome()
        if outcome.status != "ok":
            return failure_response(outcome)
        if said is not None:
            answered = [*said, ("assistant", outcome.reply or "")]
            await remember(rt.store, target.session_key, answered)
        return web.json_response(
            r.body("completed", [r.message(outcome.reply or "", "completed")], await turn.usage())
        )
    resp = await ClientStream.open(request, "responses stream")  # a client may leave (D134)
    await resp.write(r.event("response.created", response=r.body("in_progress", [])))
    await resp.write(r.event("response.in_progress", response=r.body("in_progress", [])))
    await resp.write(
        r.event(
            "response.output_item.added",
            output_index=0,
            item={**r.message("", "in_progress"), "content": []},
        )
    )
    part = {"type": "output_text", "text": "", "annotations": []}
    await resp.write(r.text_event("response.content_part.added", part=part))
    sent = ""
    async for piece in turn.pieces():
        sent += piece
        await resp.write(r.text_event("response.output_text.delta", delta=piece, logprobs=[]))
    outcome = await turn.outcome()
    if outcome.status == "ok":
        if said is not None:
            await remember(rt.store, target.session_key, [*said, ("assistant", sent)])
        await resp.write(r.text_event("response.output_text.done", text=sent, logprobs=[]))
        await resp.write(r.text_event("response.content_part.done", part={**part, "text": sent}))
        done = r.message(sent, "completed")
        await resp.write(r.event("response.output_item.done", output_index=0, item=done))
        await resp.write(
            r.event("response.completed", response=r.body("completed", [done], await turn.usage()))
        )
    else:
        await resp.write(
            r.event(
                "response.failed",
                response=r.body(
                    "failed",
                    [r.message(sent, "incomplete")] if sent else [],
                    error=_failure(outcome),
                ),
            )
        )
    return await resp.end()
