"""A loopback fake of the OpenAI Chat Completions API, for integration tests of agent runs.

The real ``openai`` SDK (and pydantic-ai's ``OpenAIChatModel`` on top of it) talks to this
server over HTTP, so tests exercise the same request/stream parsing as production while the
answers stay scripted and deterministic::

    async with running_fake_model() as fake:
        fake.script(tool_call("lookup", {"q": "x"}), text("done"))
        agent = Agent(fake.chat_model(), tools=[...])
        result = await agent.run("hi")
        assert tool_results(fake.requests[1])[0]["content"] == "..."

How a reply is chosen for each ``POST /v1/chat/completions``, first match wins:

1. the FIFO queue filled by :meth:`FakeModelServer.script` (an entry may be a responder);
2. the responder callable (``responder=`` or :meth:`FakeModelServer.set_responder`), which
   sees the request JSON and may return ``None`` to fall through;
3. the default :func:`echo` reply, ``"echo: <last user text>"``.

Replies are built with the helpers re-exported from :mod:`tests.fakes.model_script`; the HTTP
handlers are in :mod:`tests.fakes.model_api`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from typing import TYPE_CHECKING, Any

from aiohttp import web

from tests.fakes.model_api import ChatCompletionsApi, ScriptEntry
from tests.fakes.model_script import (
    DEFAULT_COMPLETION_TOKENS,
    DEFAULT_PROMPT_TOKENS,
    DelayReply,
    ErrorReply,
    Reply,
    RequestJSON,
    Responder,
    TextReply,
    ToolCall,
    ToolCallsReply,
    Usage,
    content_text,
    delay,
    echo,
    error,
    last_message,
    last_user_text,
    messages,
    split_args,
    split_words,
    system_text,
    text,
    tool_call,
    tool_calls,
    tool_names,
    tool_results,
)

if TYPE_CHECKING:
    from pydantic_ai.models.openai import OpenAIChatModel

__all__ = [
    "DEFAULT_COMPLETION_TOKENS",
    "DEFAULT_PROMPT_TOKENS",
    "DelayReply",
    "ErrorReply",
    "FakeModelServer",
    "Reply",
    "RequestJSON",
    "Responder",
    "TextReply",
    "ToolCall",
    "ToolCallsReply",
    "Usage",
    "content_text",
    "delay",
    "echo",
    "error",
    "last_message",
    "last_user_text",
    "messages",
    "running_fake_model",
    "split_args",
    "split_words",
    "system_text",
    "text",
    "tool_call",
    "tool_calls",
    "tool_names",
    "tool_results",
]


class FakeModelServer(ChatCompletionsApi):
    """aiohttp server on 127.0.0.1:0 speaking enough of the OpenAI API for pydantic-ai.

    ``requests`` holds every chat-completions body in arrival order, ``headers`` the matching
    request headers, ``replies`` what was answered to each (after resolving responders) and
    ``abandoned`` how many requests the client gave up on before their answer was sent.
    """

    def __init__(
        self,
        *,
        models: Sequence[str] = ("fake-model",),
        responder: Responder | None = None,
        api_key: str | None = None,
    ) -> None:
        self.models: tuple[str, ...] = tuple(models)
        self.api_key = api_key
        self.requests: list[RequestJSON] = []
        self.headers: list[dict[str, str]] = []
        self.replies: list[Reply] = []
        self.abandoned = 0
        self.base_url = ""
        self._responder = responder
        self._queue: deque[ScriptEntry] = deque()
        self._changed = asyncio.Condition()
        self._stopping = asyncio.Event()
        self._resume = asyncio.Event()
        self.paused = asyncio.Event()
        """Set while a ``text(..., pause_after=n)`` stream is held (see :meth:`resume`)."""
        self._runner: web.AppRunner | None = None
        self._chat_models: list[OpenAIChatModel] = []
        self._completion_ids = itertools.count(1)
        self.app = web.Application()
        self.app.router.add_get("/v1/models", self._list_models)
        self.app.router.add_get("/v1/models/{model}", self._get_model)
        self.app.router.add_post("/v1/chat/completions", self._chat_completions)
        self.app.router.add_route("*", "/{tail:.*}", self._unknown_route)

    # -- lifecycle ---------------------------------------------------------------------------

    async def start(self) -> str:
        """Bind a free loopback port; return the base URL ending in ``/v1`` (for ``base_url``)."""
        # handler_cancellation: a client that hangs up cancels its handler, ending any delay.
        self._runner = web.AppRunner(
            self.app, shutdown_timeout=1, access_log=None, handler_cancellation=True
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.base_url = f"http://127.0.0.1:{port}/v1"
        return self.base_url

    async def _hold(self) -> None:
        self.paused.set()
        waits = [
            asyncio.ensure_future(self._resume.wait()),
            asyncio.ensure_future(self._stopping.wait()),
        ]
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waits:
                w.cancel()
            self._resume.clear()
            self.paused.clear()

    def resume(self) -> None:
        """Let a held stream (``text(..., pause_after=n)``) finish."""
        self._resume.set()

    async def stop(self) -> None:
        """Wake delayed replies (they answer 503) and shut down within ~1 s; idempotent."""
        self._stopping.set()
        await self._notify()
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()
        for model in self._chat_models:
            # After the server answered what it held: entering and leaving a model closes the
            # HTTP pool its provider owns, so no client socket outlives the test.
            await model.__aenter__()
            await model.__aexit__(None, None, None)
        self._chat_models.clear()

    async def __aenter__(self) -> FakeModelServer:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    # -- scripting ---------------------------------------------------------------------------

    def script(self, *replies: ScriptEntry) -> None:
        """Queue replies (or per-request responders) answered in FIFO order, one per request."""
        self._queue.extend(replies)

    def set_responder(self, responder: Responder | None) -> None:
        """Replace the fallback responder used when the script queue is empty."""
        self._responder = responder

    @property
    def pending_script(self) -> int:
        """Scripted replies not yet consumed (tests assert 0 to catch missing model calls)."""
        return len(self._queue)

    def chat_model(self, model_name: str | None = None) -> OpenAIChatModel:
        """A pydantic-ai ``OpenAIChatModel`` pointed at this server (call after ``start``).

        Its HTTP connection pool is closed by :meth:`stop`.
        """
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider

        if not self.base_url:
            raise RuntimeError("FakeModelServer.chat_model() before start()")
        provider = OpenAIProvider(base_url=self.base_url, api_key=self.api_key or "test")
        model = OpenAIChatModel(model_name or self.models[0], provider=provider)
        self._chat_models.append(model)
        return model

    # -- waiting -----------------------------------------------------------------------------

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    async def _wait_until(self, predicate: Callable[[], bool], what: str, within: float) -> None:
        try:
            async with asyncio.timeout(within):
                async with self._changed:
                    await self._changed.wait_for(predicate)
        except TimeoutError:
            raise AssertionError(
                f"FakeModelServer: expected {what} within {within}s; got {len(self.requests)} "
                f"request(s), {self.abandoned} abandoned; last user texts: "
                f"{[last_user_text(r) for r in self.requests]}"
            ) from None

    async def wait_for_requests(
        self,
        count: int,
        timeout: float = 5.0,
    ) -> list[RequestJSON]:
        """Wait (no polling) until ``count`` requests arrived; return all recorded so far.

        Raises ``AssertionError`` describing what did arrive when the deadline passes.
        """
        await self._wait_until(lambda: len(self.requests) >= count, f"{count} request(s)", timeout)
        return list(self.requests)

    async def wait_for_abandoned(
        self,
        count: int = 1,
        timeout: float = 5.0,
    ) -> None:
        """Wait until ``count`` requests were dropped by their client before being answered."""
        await self._wait_until(
            lambda: self.abandoned >= count, f"{count} abandoned request(s)", timeout
        )


@contextlib.asynccontextmanager
async def running_fake_model(**kwargs: Any) -> AsyncIterator[FakeModelServer]:
    """Start a :class:`FakeModelServer` (``kwargs`` go to its constructor), stop it on exit.

    Use inside a test or your own fixture: ``async with running_fake_model() as fake: ...``.
    """
    server = FakeModelServer(**kwargs)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()
