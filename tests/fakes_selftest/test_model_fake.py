"""Self-tests of the fake OpenAI model server, driven by the real ``openai`` SDK and pydantic-ai.

If these pass, integration tests can trust that what they script is what the agent loop sees,
and that timeouts and shutdowns cannot hang the suite.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

import openai
import pytest
from openai import AsyncOpenAI
from pydantic_ai import (
    Agent,
    ModelHTTPError,
    ModelMessagesTypeAdapter,
    ModelTimeoutError,
    RunContext,
    Tool,
)
from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.toolsets import FunctionToolset

from tests.fakes.model import (
    FakeModelServer,
    Reply,
    RequestJSON,
    delay,
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
async def fake() -> AsyncIterator[FakeModelServer]:
    async with running_fake_model(models=["fake-model", "fake-mini"]) as server:
        yield server


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


# -- pydantic-ai -----------------------------------------------------------------------------


async def test_agent_plain_text_reply_and_usage(fake: FakeModelServer) -> None:
    agent = Agent(fake.chat_model(), instructions="You are Alice.")
    fake.script(text("Hi Bob", prompt_tokens=42, completion_tokens=7))
    result = await agent.run("hello")
    assert result.output == "Hi Bob"
    assert (result.usage.input_tokens, result.usage.output_tokens) == (42, 7)
    assert result.usage.requests == 1
    assert system_text(fake.requests[0]) == "You are Alice."
    assert last_user_text(fake.requests[0]) == "hello"


@dataclass
class Deps:
    """Per-run dependencies, as the gateway will pass session state to tools."""

    owner: str


async def test_agent_tool_call_roundtrip_with_schema_tool_and_deps(fake: FakeModelServer) -> None:
    def lookup(ctx: RunContext[Deps], city: str) -> str:
        return f"{ctx.deps.owner} asked: sunny in {city}"

    weather = Tool.from_schema(
        lookup,
        name="weather",
        description="Weather for a city.",
        json_schema={
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
        takes_ctx=True,
    )
    agent = Agent(fake.chat_model(), deps_type=Deps, system_prompt="SYS")
    fake.script(
        tool_call("weather", {"city": "Paris"}, id="call_w1", prompt_tokens=5, completion_tokens=2),
        text("It is sunny.", prompt_tokens=8, completion_tokens=3),
    )
    result = await agent.run(
        "weather?", deps=Deps(owner="bob"), toolsets=[FunctionToolset([weather])]
    )

    assert result.output == "It is sunny."
    first, second = await fake.wait_for_requests(2)
    assert tool_names(first) == ["weather"]
    assert tool_results(first) == []
    assert tool_results(second) == [
        {"role": "tool", "tool_call_id": "call_w1", "content": "bob asked: sunny in Paris"}
    ]
    assert (result.usage.input_tokens, result.usage.output_tokens) == (13, 5)
    assert (result.usage.requests, result.usage.tool_calls) == (2, 1)

    request, call, tool_return, answer = result.new_messages()
    assert isinstance(request, ModelRequest)
    assert [type(p) for p in request.parts] == [SystemPromptPart, UserPromptPart]
    assert isinstance(call, ModelResponse) and isinstance(call.parts[0], ToolCallPart)
    assert call.parts[0].tool_name == "weather"
    assert call.parts[0].args_as_dict() == {"city": "Paris"}
    assert isinstance(tool_return, ModelRequest)
    assert isinstance(tool_return.parts[0], ToolReturnPart)
    assert tool_return.parts[0].tool_call_id == "call_w1"
    assert isinstance(answer, ModelResponse) and isinstance(answer.parts[0], TextPart)
    assert answer.usage.input_tokens == 8

    # History survives a JSON round trip and is replayed to the model on the next run.
    history = ModelMessagesTypeAdapter.validate_json(
        ModelMessagesTypeAdapter.dump_json(result.all_messages())
    )
    again = await agent.run("and now?", deps=Deps(owner="bob"), message_history=history)
    assert again.output == "echo: and now?"
    roles = [m["role"] for m in fake.requests[2]["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "user"]


async def test_agent_run_stream_collects_text_deltas_in_order(fake: FakeModelServer) -> None:
    agent = Agent(fake.chat_model())

    @agent.tool_plain
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    fake.script(
        tool_call("add", {"a": 2, "b": 3}),
        text(
            "The sum is 5.", chunks=["The s", "um is", " 5."], prompt_tokens=9, completion_tokens=4
        ),
    )
    async with agent.run_stream("add 2 and 3") as stream:
        deltas = [d async for d in stream.stream_text(delta=True, debounce_by=None)]
    assert deltas == ["The s", "um is", " 5."]
    assert await stream.get_output() == "The sum is 5."
    assert all(r.get("stream") is True for r in fake.requests)
    assert fake.requests[0]["stream_options"] == {"include_usage": True}
    assert tool_results(fake.requests[1])[0]["content"] == "5"
    # 10/5 defaults for the tool-call turn plus the scripted numbers.
    assert (stream.usage.input_tokens, stream.usage.output_tokens) == (19, 9)


async def test_two_agents_share_one_fake_routed_by_system_prompt(fake: FakeModelServer) -> None:
    def route(request: RequestJSON) -> Reply:
        who = "alice" if "You are Alice" in system_text(request) else "bob"
        return text(f"{who} heard: {last_user_text(request)}")

    fake.set_responder(route)
    alice = Agent(fake.chat_model(), instructions="You are Alice.")
    bob = Agent(fake.chat_model(), instructions="You are Bob.")
    said = (await alice.run("hi Bob")).output
    async with bob.iter(said) as run:
        nodes = [type(node).__name__ async for node in run]
    assert run.result is not None
    assert run.result.output == "bob heard: alice heard: hi Bob"
    assert nodes[-1] == "End"


async def test_error_reply_surfaces_as_model_http_error(fake: FakeModelServer) -> None:
    agent = Agent(fake.chat_model())
    fake.script(error(500, "model exploded"))
    with pytest.raises(ModelHTTPError) as caught:
        await agent.run("x")
    assert caught.value.status_code == 500
    assert caught.value.body == {
        "message": "model exploded",
        "type": "server_error",
        "param": None,
        "code": None,
    }
    assert len(fake.requests) == 1


async def test_delayed_reply_abandoned_on_client_timeout_and_stop_is_prompt() -> None:
    fake = FakeModelServer()
    await fake.start()
    try:
        agent = Agent(fake.chat_model())
        fake.script(delay(30, text("too late")))
        started = time.monotonic()
        with pytest.raises(ModelTimeoutError):
            await agent.run("x", model_settings={"timeout": 0.1, "max_retries": 0})
        assert time.monotonic() - started < 2
        await fake.wait_for_abandoned(1, timeout=2)
        assert len(fake.requests) == 1
    finally:
        started = time.monotonic()
        await fake.stop()
        assert time.monotonic() - started < 1.5


async def test_stop_releases_a_client_still_waiting_on_a_delay() -> None:
    fake = FakeModelServer()
    await fake.start()
    agent = Agent(fake.chat_model())
    fake.script(delay(30, text("never")))
    run = asyncio.create_task(agent.run("x", model_settings={"max_retries": 0}))
    await fake.wait_for_requests(1)
    started = time.monotonic()
    await fake.stop()
    assert time.monotonic() - started < 1.5
    with pytest.raises(ModelHTTPError) as caught:
        await asyncio.wait_for(run, 2)
    assert caught.value.status_code == 503
