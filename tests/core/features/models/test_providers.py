"""Every provider API through its real SDK (via pydantic-ai) against a loopback fake of its wire
format, plain and streamed; fallback chains on errors and timeouts; which model answered."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest

from core.api.testing import RecordingAdapter
from core.engine.runs import RunRequest
from core.engine.runs.contract import RunOutcome
from core.runtime import Runtime
from tests.conftest import RuntimeFactory
from tests.fakes.model import FakeModelServer
from tests.fakes.providers import Call, FakeProviders
from tests.fakes.providers_requests import system_text, tool_output


@pytest.fixture
async def providers() -> AsyncIterator[FakeProviders]:
    fake = FakeProviders()
    await fake.start()
    yield fake
    await fake.stop()


def _providers(fake: FakeProviders, fake_model: FakeModelServer) -> dict[str, Any]:
    return {
        "models": {
            "providers": {
                "resp": {"baseUrl": f"{fake.url}/v1", "apiKey": "k", "api": "openai-responses"},
                "claude": {
                    "baseUrl": fake.url,
                    "apiKey": "k",
                    "api": "anthropic-messages",
                    "timeoutSeconds": 1,
                },
                "gem": {"baseUrl": fake.url, "apiKey": "k", "api": "google-gemini"},
                "olla": {"baseUrl": fake_model.base_url.removesuffix("/v1"), "api": "ollama"},
            }
        }
    }


async def _turn(
    rt: Runtime, text: str, *, stream: bool, key: str = "agent:main:main"
) -> tuple[RunOutcome, list[str]]:
    entry = await rt.services.ensure_session(key)
    deltas: list[str] = []

    async def on_delta(t: str) -> None:
        deltas.append(t)

    run = await rt.services.start_run(
        RunRequest(
            session_key=key,
            message=text,
            context=rt.services.context_for(entry),
            extra_system_prompt="Be kind.",
            on_delta=on_delta if stream else None,
        )
    )
    return await rt.runs.wait(run.id, 30), deltas


@pytest.mark.parametrize(
    ("ref", "api"),
    [("resp/gpt-x", "responses"), ("claude/claude-x", "anthropic"), ("gem/gemini-x", "gemini")],
)
@pytest.mark.parametrize("stream", [False, True])
async def test_each_api_plain_and_streamed(
    make_runtime: RuntimeFactory,
    providers: FakeProviders,
    fake_model: FakeModelServer,
    ref: str,
    api: str,
    stream: bool,
) -> None:
    rt = await make_runtime(
        {**_providers(providers, fake_model), "agents": {"defaults": {"model": ref}}}
    )
    outcome, deltas = await _turn(rt, "hello there", stream=stream)
    assert (outcome.status, outcome.reply) == ("ok", "echo: hello there")
    sent_api, body = providers.requests[-1]
    assert sent_api == api and "Be kind." in system_text(api, body)
    assert bool(body.get("stream")) == stream or api == "gemini"
    if stream:
        assert len(deltas) > 1 and deltas[-1] == "echo: hello there"
    run = await rt.store.last_run("agent:main:main")
    assert run is not None and run.meta is not None and run.meta["model"] == ref
    assert (run.input_tokens, run.output_tokens) == (12, 7)


async def test_ollama_native_base_url(
    make_runtime: RuntimeFactory, providers: FakeProviders, fake_model: FakeModelServer
) -> None:
    rt = await make_runtime(
        {**_providers(providers, fake_model), "agents": {"defaults": {"model": "olla/llama3.2"}}}
    )
    outcome, _ = await _turn(rt, "hi", stream=False)
    assert outcome.reply == "echo: hi"
    assert fake_model.requests[-1]["model"] == "llama3.2"


async def test_fallback_on_error_and_timeout_and_status_names_the_model(
    make_runtime: RuntimeFactory, providers: FakeProviders, fake_model: FakeModelServer
) -> None:
    adapter = RecordingAdapter()
    rt = await make_runtime(
        {
            **_providers(providers, fake_model),
            "agents": {
                "defaults": {
                    "model": {
                        "primary": "claude/claude-x",
                        "fallbacks": ["gem/gemini-x", "fake/fake-model"],
                    }
                }
            },
        },
        adapters=[adapter],
    )
    providers.script((529, "overloaded"))  # claude fails → gemini answers
    outcome, _ = await _turn(rt, "first", stream=False)
    assert outcome.reply == "echo: first"
    assert [a for a, _ in providers.requests] == ["anthropic", "gemini"]
    run = await rt.store.last_run("agent:main:main")
    assert run is not None and run.meta is not None and run.meta["model"] == "gem/gemini-x"

    providers.script(("hang", 5), (500, "down"))  # claude hangs past 1 s, gemini fails
    await adapter.inject(adapter.message("second"))
    assert (await adapter.wait_sent(1))[0] == "echo: second"  # the OpenAI-compatible fake
    await adapter.inject(adapter.message("/status"))
    sent = await adapter.wait_sent(2)
    assert "Answered by: fake/fake-model" in sent[1]
    assert len(fake_model.requests) == 1
    # the primary is tried again on the next turn: a fallback does not pin the session
    outcome, _ = await _turn(rt, "third", stream=True)
    assert outcome.reply == "echo: third" and providers.requests[-1][0] == "anthropic"


async def test_chain_exhausted_fails_the_run(
    make_runtime: RuntimeFactory, providers: FakeProviders, fake_model: FakeModelServer
) -> None:
    rt = await make_runtime(
        {
            **_providers(providers, fake_model),
            "agents": {
                "defaults": {"model": {"primary": "claude/claude-x", "fallbacks": ["gem/gemini-x"]}}
            },
        }
    )
    providers.script((500, "a down"), (500, "b down"))
    outcome, _ = await _turn(rt, "x", stream=False)
    assert outcome.status == "error"


async def test_missing_extra_names_it(
    make_runtime: RuntimeFactory,
    providers: FakeProviders,
    fake_model: FakeModelServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rt = await make_runtime(
        {**_providers(providers, fake_model), "agents": {"defaults": {"model": "claude/claude-x"}}}
    )
    for name in [
        m
        for m in sys.modules
        if m == "anthropic"
        or m.startswith(
            ("anthropic.", "pydantic_ai.models.anthropic", "pydantic_ai.providers.anthropic")
        )
    ]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "anthropic", None)  # as if the extra were not installed
    outcome, _ = await _turn(rt, "x", stream=False)
    assert outcome.status == "ok"
    assert outcome.reply is not None and "pip install 'crosstalk[anthropic]'" in outcome.reply
    assert providers.requests == []


@pytest.mark.parametrize(
    ("ref", "api"),
    [("resp/gpt-x", "responses"), ("claude/claude-x", "anthropic"), ("gem/gemini-x", "gemini")],
)
async def test_each_api_calls_the_session_tools(
    make_runtime: RuntimeFactory,
    providers: FakeProviders,
    fake_model: FakeModelServer,
    ref: str,
    api: str,
) -> None:
    rt = await make_runtime(
        {**_providers(providers, fake_model), "agents": {"defaults": {"model": ref}}}
    )
    await rt.services.ensure_session("agent:main:ops")
    providers.script(Call("sessions_list", {"limit": 5}), "listed")
    outcome, _ = await _turn(rt, "list them", stream=False)
    assert (outcome.status, outcome.reply) == ("ok", "listed")
    assert [a for a, _ in providers.requests] == [api, api]
    assert "agent:main:ops" in tool_output(api, providers.requests[1][1])
    entry = await rt.store.get_session("agent:main:main")
    assert entry is not None
    stored = [m for m in await rt.store.history(entry.session_id) if m.role == "toolResult"]
    assert [m.tool_name for m in stored] == ["sessions_list"]


async def test_per_agent_chain_and_session_override(
    make_runtime: RuntimeFactory, providers: FakeProviders, fake_model: FakeModelServer
) -> None:
    rt = await make_runtime(
        {
            **_providers(providers, fake_model),
            "agents": {
                "list": [
                    {"id": "main", "default": True},
                    {
                        "id": "helper",
                        "model": {"primary": "claude/claude-x", "fallbacks": ["resp/gpt-x"]},
                    },
                ]
            },
        }
    )
    providers.script((500, "down"))
    outcome, _ = await _turn(rt, "hi", stream=False, key="agent:helper:main")
    assert outcome.reply == "echo: hi"
    assert [a for a, _ in providers.requests] == ["anthropic", "responses"]
    run = await rt.store.last_run("agent:helper:main")
    assert run is not None and run.meta is not None and run.meta["model"] == "resp/gpt-x"
    outcome, _ = await _turn(rt, "main agent", stream=False)  # defaults: the OpenAI fake
    assert outcome.reply == "echo: main agent" and len(fake_model.requests) == 1
    # a session's own model (sessions.patch) is used alone, without the agent's fallbacks
    await rt.store.update_session("agent:helper:main", model="gem/gemini-x")
    outcome, _ = await _turn(rt, "pinned", stream=False, key="agent:helper:main")
    assert outcome.reply == "echo: pinned" and providers.requests[-1][0] == "gemini"
