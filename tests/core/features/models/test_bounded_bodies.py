"""Provider answers are bounded (D142): an endless body, a huge one and a silent one each end
the turn with D12's provider failure notice, without the gateway holding the body."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from aiohttp import web

from core.api.testing import RecordingAdapter
from tests.conftest import RuntimeFactory

Handler = Callable[[web.Request], Any]


async def endless(request: web.Request) -> web.StreamResponse:
    resp = web.StreamResponse(headers={"Content-Type": "application/json"})
    await resp.prepare(request)
    await resp.write(b'{"id": "x", "choices": [{"message": {"content": "')
    try:
        while True:  # never ends: a broken proxy
            await resp.write(b"a" * 65536)
    except (ConnectionResetError, RuntimeError):
        return resp


async def huge(request: web.Request) -> web.Response:
    content = "a" * 3_000_000
    body = (
        '{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,'
        '"finish_reason":"stop","message":{"role":"assistant","content":"' + content + '"}}]}'
    )
    return web.Response(body=body.encode(), content_type="application/json")


async def silent(request: web.Request) -> web.StreamResponse:
    resp = web.StreamResponse(headers={"Content-Type": "application/json"})
    await resp.prepare(request)
    await asyncio.Event().wait()  # headers, then nothing
    return resp


@pytest.fixture
async def provider() -> AsyncIterator[Callable[[Handler], Any]]:
    runners: list[web.AppRunner] = []

    async def start(handler: Handler) -> str:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", handler)
        app.router.add_post("/v1/messages", handler)
        app.router.add_post("/{gemini:v1beta/.*}", handler)
        runner = web.AppRunner(app, shutdown_timeout=0.1)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        runners.append(runner)
        return f"http://127.0.0.1:{site.port}/v1"

    yield start
    for runner in runners:
        await runner.cleanup()


@pytest.mark.parametrize(
    ("handler", "why"),
    [(endless, "connection error"), (huge, "connection error"), (silent, "timeout")],
)
async def test_an_unbounded_provider_answer_fails_the_turn_visibly(
    make_runtime: RuntimeFactory,
    provider: Callable[[Handler], Any],
    handler: Handler,
    why: str,
) -> None:
    base = await provider(handler)
    chat = RecordingAdapter()
    await make_runtime(
        {
            "models": {
                "providers": {
                    "fake": {
                        "baseUrl": base,
                        "maxResponseBytes": 1_048_576,
                        "idleTimeoutSeconds": 0.5,
                    }
                }
            }
        },
        adapters=[chat],
    )
    await chat.say("hello")
    [(_, notice)] = await chat.wait_for("⚠️", timeout=60)
    assert notice == f"⚠️ The model provider failed ({why}). Details are in the gateway log."


@pytest.mark.parametrize("api", ["anthropic-messages", "google-gemini"])
async def test_an_endless_anthropic_or_gemini_answer_fails_the_turn_visibly(
    make_runtime: RuntimeFactory, provider: Callable[[Handler], Any], api: str
) -> None:
    base = await provider(endless)
    chat = RecordingAdapter()
    await make_runtime(
        {
            "models": {
                "providers": {
                    "other": {
                        "baseUrl": base.removesuffix("/v1"),
                        "apiKey": "k",
                        "api": api,
                        "maxResponseBytes": 1_048_576,
                    }
                }
            },
            "agents": {"defaults": {"model": "other/model-x"}},
        },
        adapters=[chat],
    )
    await chat.say("hello")
    [(_, notice)] = await chat.wait_for("⚠️", timeout=60)
    assert (
        notice == "⚠️ The model provider failed (connection error). Details are in the gateway log."
    )


@pytest.mark.parametrize("handler", [endless, huge])
async def test_the_log_says_the_answer_was_too_long(
    make_runtime: RuntimeFactory,
    provider: Callable[[Handler], Any],
    handler: Handler,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The chat sees D12's short text; the operator's log names the bound that ended the answer
    (not only the SDK's "Connection error.", which reads as a network fault)."""
    base = await provider(handler)
    chat = RecordingAdapter()
    await make_runtime(
        {"models": {"providers": {"fake": {"baseUrl": base, "maxResponseBytes": 1_048_576}}}},
        adapters=[chat],
    )
    await chat.say("hello")
    await chat.wait_for("⚠️", timeout=60)
    [line] = [r.getMessage() for r in caplog.records if r.name.endswith("provider_errors")]
    assert "provider answer over 1048576 bytes" in line, line
