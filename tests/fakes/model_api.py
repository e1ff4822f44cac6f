"""The HTTP half of the fake model server: ``/v1/models``, chat completions answered from the
script (plain JSON or SSE chunks shaped like OpenAI's, held or delayed as scripted), the API key
check and OpenAI-shaped errors."""

from __future__ import annotations

import asyncio
import inspect
import json
import time
from collections import deque
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from aiohttp import web

from tests.fakes.model_script import (
    DelayReply,
    ErrorReply,
    Reply,
    RequestJSON,
    Responder,
    TextReply,
    ToolCallsReply,
    echo,
    error,
    split_args,
    split_words,
)

ScriptEntry = Reply | Responder


def _json_response(
    payload: Any, status: int = 200, headers: dict[str, str] | None = None
) -> web.Response:
    return web.Response(
        body=json.dumps(payload).encode(),
        status=status,
        headers=headers,
        content_type="application/json",
    )


def _error_response(reply: ErrorReply) -> web.Response:
    """``x-should-retry`` pins the SDK's retry decision so a scripted error is answered once."""
    headers = {"x-should-retry": "true" if reply.retry else "false"}
    return _json_response(reply.body(), status=reply.status, headers=headers)


class ChatCompletionsApi:
    """Mixed into FakeModelServer (which provides the attributes and helpers declared here)."""

    models: tuple[str, ...]
    api_key: str | None
    requests: list[RequestJSON]
    headers: list[dict[str, str]]
    replies: list[Reply]
    abandoned: int
    _responder: Responder | None
    _queue: deque[ScriptEntry]
    _stopping: asyncio.Event
    _completion_ids: Iterator[int]

    if TYPE_CHECKING:  # provided by FakeModelServer

        async def _notify(self) -> None: ...
        async def _hold(self) -> None: ...

    async def _list_models(self, request: web.Request) -> web.Response:
        data = [self._model_json(m) for m in self.models]
        return _json_response({"object": "list", "data": data})

    async def _get_model(self, request: web.Request) -> web.Response:
        model = request.match_info["model"]
        if model not in self.models:
            return _error_response(
                error(404, f"The model '{model}' does not exist", code="model_not_found")
            )
        return _json_response(self._model_json(model))

    @staticmethod
    def _model_json(model: str) -> dict[str, Any]:
        return {"id": model, "object": "model", "created": 0, "owned_by": "crosstalk-fake"}

    async def _unknown_route(self, request: web.Request) -> web.Response:
        """OpenAI-shaped 404, naming the route, so a wrong client API shows up plainly."""
        return _error_response(
            error(404, f"fake model server: no route {request.method} {request.path}")
        )

    def _unauthorized(self, request: web.Request) -> web.Response | None:
        if self.api_key is None:
            return None
        if request.headers.get("Authorization") == f"Bearer {self.api_key}":
            return None
        return _error_response(error(401, "Incorrect API key provided", code="invalid_api_key"))

    async def _chat_completions(self, request: web.Request) -> web.StreamResponse:
        if (denied := self._unauthorized(request)) is not None:
            return denied
        try:
            body = await request.json()
        except ValueError:
            return _error_response(error(400, "request body is not valid JSON"))
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return _error_response(error(400, "'messages' is a required property"))

        self.requests.append(body)
        self.headers.append(dict(request.headers))
        await self._notify()
        try:
            reply = await self._choose(body)
        except Exception as exc:  # a broken responder must fail the run loudly, not hang it
            reply = error(500, f"fake model responder raised {exc!r}")
        self.replies.append(reply)
        try:
            return await self._answer(request, body, reply)
        except asyncio.CancelledError:
            self.abandoned += 1
            await self._notify()
            raise

    async def _choose(self, body: RequestJSON) -> Reply:
        while self._queue:
            entry = self._queue.popleft()
            reply = await self._call(entry, body) if callable(entry) else entry
            if reply is not None:
                return reply
        if self._responder is not None:
            reply = await self._call(self._responder, body)
            if reply is not None:
                return reply
        return echo(body)

    @staticmethod
    async def _call(responder: Responder, body: RequestJSON) -> Reply | None:
        result = responder(body)
        if inspect.isawaitable(result):
            return await result
        return result

    async def _wait_unless_stopping(self, seconds: float) -> bool:
        """Sleep ``seconds`` unless the server stops first; True if the full wait elapsed."""
        stopping = asyncio.ensure_future(self._stopping.wait())
        try:
            await asyncio.wait({stopping}, timeout=seconds)
        finally:
            stopping.cancel()
        return not self._stopping.is_set()

    async def _answer(
        self, request: web.Request, body: RequestJSON, reply: Reply
    ) -> web.StreamResponse:
        while isinstance(reply, DelayReply):
            if not await self._wait_unless_stopping(reply.seconds):
                return _error_response(error(503, "fake model server is stopping"))
            reply = reply.reply
        if isinstance(reply, ErrorReply):
            return _error_response(reply)
        completion_id = f"chatcmpl-fake-{next(self._completion_ids)}"
        model = str(body.get("model") or self.models[0])
        if body.get("stream"):
            return await self._stream(request, body, reply, completion_id, model)
        return _json_response(self._completion_json(reply, completion_id, model))

    @staticmethod
    def _completion_json(
        reply: TextReply | ToolCallsReply, completion_id: str, model: str
    ) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.content, "refusal": None}
        if isinstance(reply, ToolCallsReply):
            finish_reason = "tool_calls"
            message["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for call in reply.calls
            ]
        else:
            finish_reason = reply.finish_reason
        return {
            "id": completion_id,
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}
            ],
            "usage": reply.usage.as_json(),
            "system_fingerprint": None,
        }

    async def _stream(
        self,
        request: web.Request,
        body: RequestJSON,
        reply: TextReply | ToolCallsReply,
        completion_id: str,
        model: str,
    ) -> web.StreamResponse:
        options = body.get("stream_options")
        include_usage = isinstance(options, dict) and bool(options.get("include_usage"))
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)
        pause = getattr(reply, "pause_after", None)
        for i, chunk in enumerate(self._stream_chunks(reply, completion_id, model, include_usage)):
            await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
            if pause is not None and i == pause:  # chunk 0 is the role-only chunk
                await self._hold()
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response

    @staticmethod
    def _stream_chunks(
        reply: TextReply | ToolCallsReply, completion_id: str, model: str, include_usage: bool
    ) -> list[dict[str, Any]]:
        """The SSE chunks, shaped like OpenAI's: role first, deltas, finish, optional usage."""
        created = int(time.time())
        base: dict[str, Any] = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "system_fingerprint": None,
        }
        if include_usage:
            base["usage"] = None

        def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
            choice = {"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}
            return {**base, "choices": [choice]}

        chunks = [chunk({"role": "assistant", "content": ""})]
        if isinstance(reply, TextReply):
            chunks += [chunk({"content": piece}) for piece in reply.chunks]
            finish_reason = reply.finish_reason
        else:
            if reply.content:
                chunks += [chunk({"content": piece}) for piece in split_words(reply.content)]
            for index, call in enumerate(reply.calls):
                chunks.append(
                    chunk(
                        {
                            "tool_calls": [
                                {
                                    "index": index,
                                    "id": call.id,
                                    "type": "function",
                                    "function": {"name": call.name, "arguments": ""},
                                }
                            ]
                        }
                    )
                )
                chunks += [
                    chunk({"tool_calls": [{"index": index, "function": {"arguments": part}}]})
                    for part in split_args(call.arguments)
                ]
            finish_reason = "tool_calls"
        chunks.append(chunk({}, finish_reason))
        if include_usage:
            chunks.append({**base, "choices": [], "usage": reply.usage.as_json()})
        return chunks
