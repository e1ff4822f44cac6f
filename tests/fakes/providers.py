"""Loopback fakes of the non-OpenAI-chat provider wire formats, for the real SDKs to talk to.

One aiohttp server speaks three APIs, each plain and streamed, as their SDKs expect:

* OpenAI Responses — ``POST /v1/responses`` (SSE events ``response.*``);
* Anthropic Messages — ``POST /v1/messages`` (SSE ``message_start`` … ``message_stop``);
* Google Gemini — ``POST /v1beta/models/{model}:generateContent`` and
  ``:streamGenerateContent?alt=sse``.

Replies are text (default ``"echo: <last user text>"``), scripted per request with
:meth:`FakeProviders.script`: a string, an ``(status, message)`` error, ``("hang", s)``, or a
:class:`Call` (one function call, answered without streaming). Each request is recorded as
``(api, body)`` in ``requests``; :mod:`tests.fakes.providers_requests` reads them back
(:func:`~tests.fakes.providers_requests.tool_output`: a tool result).
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections import deque
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from tests.fakes.providers_requests import last_user_text


@dataclass(frozen=True)
class Call:
    """A scripted function call of the model."""

    name: str
    args: dict[str, Any]


Script = str | tuple[int, str] | tuple[str, float] | Call
USAGE_IN, USAGE_OUT = 12, 7


def _sse(data: dict[str, Any], event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


class FakeProviders:
    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self._queue: deque[Script] = deque()
        self._runner: web.AppRunner | None = None
        self.url = ""
        app = web.Application()
        app.router.add_post("/v1/responses", self._responses)
        app.router.add_post("/v1/messages", self._anthropic)
        app.router.add_post("/v1beta/models/{call}", self._gemini)
        self.app = app

    async def start(self) -> str:
        self._runner = web.AppRunner(
            self.app, access_log=None, shutdown_timeout=1, handler_cancellation=True
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{self._runner.addresses[0][1]}"
        return self.url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def script(self, *replies: Script) -> None:
        self._queue.extend(replies)

    async def _reply(self, api: str, body: dict[str, Any]) -> str | Call | web.Response:
        self.requests.append((api, body))
        entry = self._queue.popleft() if self._queue else None
        if isinstance(entry, tuple) and entry[0] == "hang":
            await asyncio.sleep(float(entry[1]))
            entry = None
        if isinstance(entry, tuple):
            status, message = int(entry[0]), str(entry[1])
            err: dict[str, Any] = {
                "error": {
                    "message": message,
                    "type": "api_error",
                    "code": status,
                    "status": "INTERNAL",
                }
            }
            if api == "anthropic":
                err = {"type": "error", "error": {"type": "api_error", "message": message}}
            return web.json_response(err, status=status, headers={"x-should-retry": "false"})
        if isinstance(entry, str | Call):
            return entry
        return f"echo: {last_user_text(api, body)}"

    @staticmethod
    async def _stream(request: web.Request, frames: list[bytes]) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        for frame in frames:
            await resp.write(frame)
        await resp.write_eof()
        return resp

    # -- OpenAI Responses ----------------------------------------------------------------------

    async def _responses(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        text = await self._reply("responses", body)
        if isinstance(text, web.Response):
            return text
        if isinstance(text, Call):
            call = {
                "type": "function_call",
                "id": f"fc_{uuid.uuid4().hex}",
                "call_id": f"call_{uuid.uuid4().hex[:8]}",
                "name": text.name,
                "arguments": json.dumps(text.args),
                "status": "completed",
            }
            return web.json_response(
                {
                    "id": f"resp_{uuid.uuid4().hex}",
                    "object": "response",
                    "status": "completed",
                    "created_at": int(time.time()),
                    "model": body.get("model"),
                    "output": [call],
                    "usage": {
                        "input_tokens": USAGE_IN,
                        "output_tokens": USAGE_OUT,
                        "total_tokens": USAGE_IN + USAGE_OUT,
                    },
                    "parallel_tool_calls": True,
                    "tool_choice": "auto",
                    "tools": [],
                    "error": None,
                    "incomplete_details": None,
                }
            )
        rid, mid = f"resp_{uuid.uuid4().hex}", f"msg_{uuid.uuid4().hex}"
        message = {
            "type": "message",
            "id": mid,
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }
        usage = {
            "input_tokens": USAGE_IN,
            "output_tokens": USAGE_OUT,
            "total_tokens": USAGE_IN + USAGE_OUT,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        }

        def response(status: str, output: list[Any], use: Any) -> dict[str, Any]:
            return {
                "id": rid,
                "object": "response",
                "created_at": int(time.time()),
                "status": status,
                "model": body.get("model"),
                "output": output,
                "usage": use,
                "parallel_tool_calls": True,
                "tool_choice": "auto",
                "tools": [],
                "error": None,
                "incomplete_details": None,
            }

        if not body.get("stream"):
            return web.json_response(response("completed", [message], usage))
        seq = iter(range(1000))

        def ev(type_: str, **fields: Any) -> bytes:
            return _sse({"type": type_, "sequence_number": next(seq), **fields}, type_)

        part = {"type": "output_text", "text": "", "annotations": []}
        frames = [
            ev("response.created", response=response("in_progress", [], None)),
            ev(
                "response.output_item.added",
                output_index=0,
                item={**message, "status": "in_progress", "content": []},
            ),
            ev(
                "response.content_part.added",
                item_id=mid,
                output_index=0,
                content_index=0,
                part=part,
            ),
        ]
        frames += [
            ev(
                "response.output_text.delta",
                item_id=mid,
                output_index=0,
                content_index=0,
                delta=w,
                logprobs=[],
            )
            for w in _words(text)
        ]
        frames += [
            ev(
                "response.output_text.done",
                item_id=mid,
                output_index=0,
                content_index=0,
                text=text,
                logprobs=[],
            ),
            ev("response.output_item.done", output_index=0, item=message),
            ev("response.completed", response=response("completed", [message], usage)),
        ]
        return await self._stream(request, frames)

    # -- Anthropic Messages --------------------------------------------------------------------

    async def _anthropic(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        text = await self._reply("anthropic", body)
        if isinstance(text, web.Response):
            return text
        if isinstance(text, Call):
            return web.json_response(
                {
                    "id": f"msg_{uuid.uuid4().hex}",
                    "type": "message",
                    "role": "assistant",
                    "model": body.get("model"),
                    "stop_reason": "tool_use",
                    "stop_sequence": None,
                    "content": [
                        {
                            "type": "tool_use",
                            "id": f"toolu_{uuid.uuid4().hex[:12]}",
                            "name": text.name,
                            "input": text.args,
                        }
                    ],
                    "usage": {"input_tokens": USAGE_IN, "output_tokens": USAGE_OUT},
                }
            )
        msg = {
            "id": f"msg_{uuid.uuid4().hex}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model"),
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": USAGE_IN, "output_tokens": USAGE_OUT},
        }
        if not body.get("stream"):
            return web.json_response(msg)
        start = {
            **msg,
            "content": [],
            "stop_reason": None,
            "usage": {"input_tokens": USAGE_IN, "output_tokens": 1},
        }
        frames = [
            _sse({"type": "message_start", "message": start}, "message_start"),
            _sse(
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
                "content_block_start",
            ),
        ]
        frames += [
            _sse(
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": w},
                },
                "content_block_delta",
            )
            for w in _words(text)
        ]
        frames += [
            _sse({"type": "content_block_stop", "index": 0}, "content_block_stop"),
            _sse(
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                    "usage": {"output_tokens": USAGE_OUT},
                },
                "message_delta",
            ),
            _sse({"type": "message_stop"}, "message_stop"),
        ]
        return await self._stream(request, frames)

    # -- Google Gemini -------------------------------------------------------------------------

    async def _gemini(self, request: web.Request) -> web.StreamResponse:
        model, _, method = request.match_info["call"].partition(":")
        body = await request.json()
        body["_model"] = model
        text = await self._reply("gemini", body)
        if isinstance(text, web.Response):
            return text
        if isinstance(text, Call):
            return web.json_response(
                {
                    "candidates": [
                        {
                            "content": {
                                "role": "model",
                                "parts": [{"functionCall": {"name": text.name, "args": text.args}}],
                            },
                            "finishReason": "STOP",
                            "index": 0,
                        }
                    ],
                    "usageMetadata": {
                        "promptTokenCount": USAGE_IN,
                        "candidatesTokenCount": USAGE_OUT,
                        "totalTokenCount": USAGE_IN + USAGE_OUT,
                    },
                    "modelVersion": model,
                    "responseId": uuid.uuid4().hex,
                }
            )
        response_id = uuid.uuid4().hex  # one id for every chunk of a response

        def chunk(piece: str, last: bool) -> dict[str, Any]:
            cand: dict[str, Any] = {
                "content": {"role": "model", "parts": [{"text": piece}]},
                "index": 0,
            }
            out: dict[str, Any] = {
                "candidates": [cand],
                "modelVersion": model,
                "responseId": response_id,
            }
            if last:
                cand["finishReason"] = "STOP"
                out["usageMetadata"] = {
                    "promptTokenCount": USAGE_IN,
                    "candidatesTokenCount": USAGE_OUT,
                    "totalTokenCount": USAGE_IN + USAGE_OUT,
                }
            return out

        if method == "generateContent":
            return web.json_response(chunk(text, True))
        words = _words(text)
        return await self._stream(
            request, [_sse(chunk(w, i == len(words) - 1)) for i, w in enumerate(words)]
        )


def _words(text: str) -> list[str]:
    parts = text.split(" ")
    return [p + (" " if i < len(parts) - 1 else "") for i, p in enumerate(parts)] or [""]
