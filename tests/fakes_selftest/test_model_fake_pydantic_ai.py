"""Self-tests of the fake OpenAI model server, driven by pydantic-ai: text, tool calls with deps,
streaming, two agents on one fake, error replies, timeouts and stops.

If these pass, the agent loop sees what tests script, and timeouts and shutdowns cannot hang
the suite.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

import pytest
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
    system_text,
    text,
    tool_call,
    tool_names,
    tool_results,
)

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
