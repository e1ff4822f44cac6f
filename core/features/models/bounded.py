"""Provider answers bounded in bytes and in idle time (D142).

An endless or enormous body (a broken proxy, a hostile endpoint) would otherwise grow the
gateway until the turn's timeout, and a huge answer would be relayed whole. The HTTP clients
of the OpenAI, Anthropic and Gemini SDKs get a response hook that wraps each body in
:class:`BoundedBody` before the SDK reads it, for plain answers and streams alike: past
`max_bytes` the read fails as a connection error, after `idle` seconds without a byte as a
timeout, so the turn ends with D12's provider failure notice (the log keeps the detail).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any


def bounded_http_client(max_bytes: int, idle: float) -> Any:
    """The OpenAI SDK's aiohttp-based client (D51) with every response body bounded, on the
    process's one TLS context for these clients (D193)."""
    from openai import DefaultAioHttpClient

    from core.features.models.tls import client_context

    return DefaultAioHttpClient(
        event_hooks={"response": [bounded_hook(max_bytes, idle)]}, verify=client_context()
    )


def bounded_anthropic_client(max_bytes: int, idle: float) -> Any:
    """The Anthropic SDK's default client (its timeouts and pool) with every body bounded."""
    from anthropic import DefaultAsyncHttpxClient

    return DefaultAsyncHttpxClient(event_hooks={"response": [bounded_hook(max_bytes, idle)]})


def bounded_google_client(max_bytes: int, idle: float) -> Any:
    """An httpx2 client for Gemini with pydantic-ai's own timeout (20 minutes for long decodes,
    5 s to connect) and every body bounded."""
    import httpx2

    return httpx2.AsyncClient(
        timeout=httpx2.Timeout(1200, connect=5),
        event_hooks={"response": [bounded_hook(max_bytes, idle)]},
    )


def bounded_hook(max_bytes: int, idle: float) -> Any:
    """An httpx2 response hook wrapping the body in :class:`BoundedBody` before it is read."""
    import httpx2

    class BoundedBody(httpx2.AsyncByteStream):
        def __init__(self, inner: Any, request: Any) -> None:
            self.inner = inner
            self.request = request

        async def __aiter__(self) -> AsyncIterator[bytes]:
            seen = 0
            chunks = self.inner.__aiter__()
            while True:
                try:
                    async with asyncio.timeout(idle):  # no task per chunk, unlike wait_for
                        chunk = await chunks.__anext__()
                except StopAsyncIteration:
                    return
                except TimeoutError:
                    raise httpx2.ReadTimeout(
                        f"provider sent nothing for {idle:g} s", request=self.request
                    ) from None
                seen += len(chunk)
                if seen > max_bytes:
                    raise httpx2.ReadError(
                        f"provider answer over {max_bytes} bytes", request=self.request
                    )
                yield chunk

        async def aclose(self) -> None:
            await self.inner.aclose()

    async def bound(response: Any) -> None:
        response.stream = BoundedBody(response.stream, response.request)

    return bound
