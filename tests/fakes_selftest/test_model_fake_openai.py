"""Self-tests of the fake OpenAI model server, driven by the real ``openai`` SDK: models, echo,
scripts and responders, streamed text and tool calls, error replies, the API key, waits.

If these pass, integration tests can trust that what they script is what the agent loop sees.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator

import openai
import pytest
from openai import AsyncOpenAI

from tests.fakes.model import (
    FakeModelServer,
    Reply,
    RequestJSON,
    error,
    last_user_text,
    running_fake_model,
    system_text,
    text,
    tool_call,
    tool_calls,
    tool_names,
    tool_results,
)


@pytest.fixture
async def client(fake: FakeModelServer) -> AsyncIterator[AsyncOpenAI]:
    # Default max_retries (2) on purpose: scripted errors must still be answered exactly once.
    sdk = AsyncOpenAI(base_url=fake.base_url, api_key="test")
    yield sdk
    await sdk.close()


# -- raw OpenAI SDK --------------------------------------------------------------------------


async def test_start_returns_loopback_v1_url_and_lists_models(
    fake: FakeModelServer, client: AsyncOpenAI
) -> None:
    assert fake.base_url.startswith("http://127.0.0.1:")
    assert fake.base_url.endswith("/v1")
    page = await client.models.list()
    assert [m.id for m in page.data] == ["fake-model", "fake-mini"]
    assert fake.requests == []  # only chat completions are recorded


async def test_default_reply_echoes_last_user_text(
    fake: FakeModelServer, client: AsyncOpenAI
) -> None:
    completion = await client.chat.completions.create(
        model="fake-mini",
        messages=[
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": "x"},
            {"role": "user", "content": [{"type": "text", "text": "second"}]},
        ],
    )
    assert completion.choices[0].message.content == "echo: second"
    assert completion.choices[0].finish_reason == "stop"
    assert completion.model == "fake-mini"
    assert completion.usage is not None
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (10, 5)
    assert fake.requests[0]["model"] == "fake-mini"
    assert fake.headers[0]["Authorization"] == "Bearer test"


async def test_script_is_fifo_then_responder_then_echo(
    fake: FakeModelServer, client: AsyncOpenAI
) -> None:
    def by_prompt(request: RequestJSON) -> Reply | None:
        return text("pong") if last_user_text(request) == "ping" else None

    fake.set_responder(by_prompt)
    fake.script(text("one"), lambda request: text(f"two<{last_user_text(request)}>"))
    answers = []
    for prompt in ["a", "b", "ping", "c"]:
        completion = await client.chat.completions.create(
            model="fake-model", messages=[{"role": "user", "content": prompt}]
        )
        answers.append(completion.choices[0].message.content)
    assert answers == ["one", "two<b>", "pong", "echo: c"]
    assert fake.pending_script == 0


async def test_stream_text_chunks_in_order_with_usage_chunk(
    fake: FakeModelServer, client: AsyncOpenAI
) -> None:
    fake.script(
        text("Hello there, world", prompt_tokens=3, completion_tokens=4),
        text("no usage"),
    )
    stream = await client.chat.completions.create(
        model="fake-model",
        messages=[{"role": "user", "content": "hi"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    deltas, usages, finish = [], [], []
    async for chunk in stream:
        if chunk.usage is not None:
            usages.append((chunk.usage.prompt_tokens, chunk.usage.completion_tokens))
        for choice in chunk.choices:
            if choice.delta.content:
                deltas.append(choice.delta.content)
            if choice.finish_reason:
                finish.append(choice.finish_reason)
    assert deltas == ["Hello ", "there, ", "world"]
    assert usages == [(3, 4)]
    assert finish == ["stop"]

    stream = await client.chat.completions.create(
        model="fake-model", messages=[{"role": "user", "content": "hi"}], stream=True
    )
    chunks = [chunk async for chunk in stream]
    assert all(chunk.usage is None for chunk in chunks)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "no usage"


async def test_stream_tool_call_arguments_split_over_chunks(
    fake: FakeModelServer, client: AsyncOpenAI
) -> None:
    fake.script(
        tool_calls(
            tool_call("search", {"query": "weather in Paris"}, id="call_a"),
            tool_call("notify", {"to": "bob", "urgent": True}),
        )
    )
    stream = await client.chat.completions.create(
        model="fake-model",
        messages=[{"role": "user", "content": "go"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    fragments: dict[int, list[str]] = {}
    headers: dict[int, tuple[str | None, str | None]] = {}
    finish: list[str] = []
    async for chunk in stream:
        for choice in chunk.choices:
            if choice.finish_reason:
                finish.append(choice.finish_reason)
            for delta in choice.delta.tool_calls or []:
                assert delta.function is not None
                if delta.id:
                    headers[delta.index] = (delta.id, delta.function.name)
                if delta.function.arguments:
                    fragments.setdefault(delta.index, []).append(delta.function.arguments)
    assert headers[0] == ("call_a", "search")
    assert headers[1][1] == "notify"
    assert headers[1][0]  # a generated id
    assert all(len(parts) > 1 for parts in fragments.values())  # really split
    assert json.loads("".join(fragments[0])) == {"query": "weather in Paris"}
    assert json.loads("".join(fragments[1])) == {"to": "bob", "urgent": True}
    assert finish == ["tool_calls"]


async def test_error_reply_has_openai_shape_and_is_not_retried(
    fake: FakeModelServer, client: AsyncOpenAI
) -> None:
    fake.script(error(503, "overloaded", code="overloaded"))
    with pytest.raises(openai.InternalServerError) as caught:
        await client.chat.completions.create(
            model="fake-model", messages=[{"role": "user", "content": "x"}]
        )
    assert caught.value.status_code == 503
    assert caught.value.body == {
        "message": "overloaded",
        "type": "server_error",
        "param": None,
        "code": "overloaded",
    }
    assert len(fake.requests) == 1  # the SDK's default retries did not fire

    fake.script(error(400, "bad tool schema"))
    with pytest.raises(openai.BadRequestError, match="bad tool schema"):
        await client.chat.completions.create(
            model="fake-model", messages=[{"role": "user", "content": "x"}], stream=True
        )


async def test_responder_exception_is_a_500_naming_it(
    fake: FakeModelServer, client: AsyncOpenAI
) -> None:
    def broken(request: RequestJSON) -> Reply:
        raise KeyError("missing-branch")

    fake.set_responder(broken)
    with pytest.raises(openai.InternalServerError, match="missing-branch"):
        await client.chat.completions.create(
            model="fake-model", messages=[{"role": "user", "content": "x"}]
        )


async def test_api_key_is_enforced_when_configured() -> None:
    async with running_fake_model(api_key="sk-right") as fake:
        for key, ok in [("sk-wrong", False), ("sk-right", True)]:
            async with AsyncOpenAI(base_url=fake.base_url, api_key=key) as sdk:
                call = sdk.chat.completions.create(
                    model="fake-model", messages=[{"role": "user", "content": "x"}]
                )
                if ok:
                    assert (await call).choices[0].message.content == "echo: x"
                else:
                    with pytest.raises(openai.AuthenticationError):
                        await call
        assert len(fake.requests) == 1  # the rejected call is not recorded


async def test_wait_for_requests_wakes_on_arrival_and_fails_on_deadline(
    fake: FakeModelServer, client: AsyncOpenAI
) -> None:
    started = time.monotonic()
    with pytest.raises(AssertionError, match="expected 1 request"):
        await fake.wait_for_requests(1, timeout=0.05)
    assert time.monotonic() - started < 1

    waiter = asyncio.create_task(fake.wait_for_requests(2))
    for prompt in ["a", "b"]:
        await client.chat.completions.create(
            model="fake-model", messages=[{"role": "user", "content": prompt}]
        )
    seen = await asyncio.wait_for(waiter, 1)
    assert [last_user_text(r) for r in seen] == ["a", "b"]


def test_request_helpers() -> None:
    request: RequestJSON = {
        "messages": [
            {"role": "system", "content": "You are A."},
            {"role": "developer", "content": [{"type": "text", "text": "Be brief."}]},
            {
                "role": "user",
                "content": [{"type": "text", "text": "hi "}, {"type": "text", "text": "there"}],
            },
            {"role": "assistant", "content": None, "tool_calls": []},
            {"role": "tool", "tool_call_id": "c1", "content": "r1"},
            {"role": "tool", "tool_call_id": "c2", "content": "r2"},
        ],
        "tools": [{"type": "function", "function": {"name": "t1", "parameters": {}}}],
    }
    assert last_user_text(request) == "hi there"
    assert system_text(request) == "You are A.\n\nBe brief."
    assert [r["tool_call_id"] for r in tool_results(request)] == ["c1", "c2"]
    assert tool_names(request) == ["t1"]
    assert last_user_text({"messages": []}) == ""
    with pytest.raises(ValueError):
        text("abc", chunks=["a", "c"])
