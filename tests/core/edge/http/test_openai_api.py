"""The OpenAI-compatible API (D14) driven by the official `openai` SDK, as real clients do:
models.list/retrieve, chat (plain, streamed, usage chunk, errors), agent and session choice,
system prompts, and the Responses API."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import openai
import pytest
from aiohttp.test_utils import TestClient, TestServer

from core.edge.http.server import build_app
from core.runtime import Runtime
from tests.conftest import Client, RuntimeFactory
from tests.fakes.model import FakeModelServer, error, last_user_text, system_text

AUTH = {"Authorization": "Bearer test-token"}
AGENTS = {
    "agents": {
        "list": [
            {"id": "main", "default": True},
            {"id": "helper", "systemPrompt": "You are the helper."},
        ]
    }
}


@pytest.fixture
async def gateway(
    make_runtime: RuntimeFactory,
) -> AsyncIterator[tuple[openai.AsyncOpenAI, Client, Runtime]]:
    rt = await make_runtime(AGENTS)
    assert rt.warmup is not None
    await rt.warmup  # the SDK below must not see httpx half-imported by the warm-up thread
    async with TestClient(TestServer(build_app(rt, "test-token", []))) as c:
        client = openai.AsyncOpenAI(
            base_url=str(c.make_url("/v1")), api_key="test-token", max_retries=0
        )
        yield client, c, rt
        await client.close()


Gateway = tuple[openai.AsyncOpenAI, Client, Runtime]


async def test_models_list_and_retrieve(gateway: Gateway) -> None:
    client, c, _ = gateway
    page = await client.models.list()
    assert [m.id for m in page.data] == ["crosstalk", "crosstalk/main", "crosstalk/helper"]
    assert {m.owned_by for m in page.data} == {"crosstalk"}
    assert all(m.object == "model" and m.created > 0 for m in page.data)
    got = await client.models.retrieve("crosstalk/helper")
    assert got.id == "crosstalk/helper"
    for path in ("/v1/models/crosstalk/helper", "/v1/models/crosstalk%2Fhelper"):
        resp = await c.get(path, headers=AUTH)
        assert resp.status == 200 and (await resp.json())["id"] == "crosstalk/helper"
    with pytest.raises(openai.NotFoundError) as info:
        await client.models.retrieve("crosstalk/nope")
    assert info.value.body == {
        "message": "model not found: crosstalk/nope",
        "type": "invalid_request_error",
        "code": "model_not_found",
    }
    bad = openai.AsyncOpenAI(base_url=client.base_url, api_key="wrong", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        await bad.models.list()
    await bad.close()


async def test_chat_plain_picks_agent_and_names_it(
    gateway: Gateway, fake_model: FakeModelServer
) -> None:
    client, _, rt = gateway
    done = await client.chat.completions.create(
        model="crosstalk/helper", messages=[{"role": "user", "content": "hello"}]
    )
    assert done.choices[0].message.content == "echo: hello"
    assert done.choices[0].finish_reason == "stop"
    assert done.model == "crosstalk/helper"
    assert done.usage is not None
    assert (done.usage.prompt_tokens, done.usage.completion_tokens) == (10, 5)
    assert "You are the helper." in system_text(fake_model.requests[-1])
    assert await rt.store.get_session("agent:helper:main") is None  # never main without `user`
    with pytest.raises(openai.NotFoundError) as info:
        await client.chat.completions.create(
            model="crosstalk/nope", messages=[{"role": "user", "content": "hi"}]
        )
    assert info.value.body == {
        "message": "model not found: crosstalk/nope",
        "type": "invalid_request_error",
        "code": "model_not_found",
    }


async def test_user_session_header_and_system_messages(
    gateway: Gateway, fake_model: FakeModelServer
) -> None:
    client, _, rt = gateway
    await client.chat.completions.create(
        model="crosstalk",
        user="alice",
        messages=[
            {"role": "system", "content": "Answer in French."},
            {"role": "developer", "content": "Be brief."},
            {"role": "user", "content": "earlier, ignored"},
            {"role": "assistant", "content": "old"},
            {"role": "user", "content": "bonjour"},
        ],
    )
    sent = fake_model.requests[-1]
    assert "Answer in French.\n\nBe brief." in system_text(sent)
    assert last_user_text(sent) == "bonjour"
    assert "earlier, ignored" in str(sent["messages"])  # a new session starts from them (D80)
    entry = await rt.store.get_session("agent:main:openai-user:alice")
    assert entry is not None
    history = await rt.store.history(entry.session_id, limit=10)
    assert [m.role for m in history] == ["user", "assistant", "user", "assistant"]
    # the same user lands in the same session; the header wins over `user`
    await client.chat.completions.create(
        model="crosstalk", user="alice", messages=[{"role": "user", "content": "again"}]
    )
    assert "bonjour" in str(fake_model.requests[-1]["messages"])
    await client.chat.completions.create(
        model="crosstalk/helper",
        user="alice",
        messages=[{"role": "user", "content": "x"}],
        extra_headers={"x-crosstalk-session-key": "agent:main:ops"},
    )
    assert await rt.store.get_session("agent:main:ops") is not None
    done = await client.chat.completions.create(
        model="crosstalk/helper",
        messages=[{"role": "user", "content": "y"}],
        extra_headers={"x-crosstalk-session-key": "desk"},
    )
    assert done.model == "crosstalk/helper"
    assert await rt.store.get_session("agent:helper:desk") is not None


async def test_stream_with_usage_chunk(gateway: Gateway, fake_model: FakeModelServer) -> None:
    client, _, _ = gateway
    stream = await client.chat.completions.create(
        model="crosstalk/helper",
        stream=True,
        stream_options={"include_usage": True},
        messages=[{"role": "user", "content": "one two three"}],
    )
    chunks = [c async for c in stream]
    assert (
        "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        == "echo: one two three"
    )
    assert {c.model for c in chunks} == {"crosstalk/helper"}
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert chunks[-1].usage.prompt_tokens == 10 and chunks[-1].usage.total_tokens == 15
    plain = await client.chat.completions.create(
        model="crosstalk", stream=True, messages=[{"role": "user", "content": "a"}]
    )
    assert all(c.usage is None for c in [c async for c in plain])


async def test_failing_run_gives_openai_errors(
    gateway: Gateway, fake_model: FakeModelServer
) -> None:
    client, c, _ = gateway
    fake_model.script(error(500, "upstream exploded"))
    with pytest.raises(openai.APIStatusError) as info:
        await client.chat.completions.create(
            model="crosstalk", messages=[{"role": "user", "content": "x"}]
        )
    assert info.value.status_code == 502
    body: Any = info.value.body
    assert body["type"] == "server_error" and body["code"] == "error"
    fake_model.script(error(500, "upstream exploded"))
    stream = await client.chat.completions.create(
        model="crosstalk", stream=True, messages=[{"role": "user", "content": "x"}]
    )
    with pytest.raises(openai.APIError) as streamed:
        async for _ in stream:
            pass
    assert streamed.value.body["code"] == "error"  # type: ignore[index]
    fake_model.script(error(500, "upstream exploded"))
    resp = await c.post(
        "/v1/chat/completions",
        headers=AUTH,
        json={"stream": True, "messages": [{"role": "user", "content": "x"}]},
    )
    raw = (await resp.read()).decode()
    events = [line for line in raw.splitlines() if line.startswith("data: ")]
    assert events[-1] == "data: [DONE]" and events[-2].startswith('data: {"error": {')
    assert '"finish_reason": "stop"' not in raw and '"finish_reason": "error"' not in raw


async def test_v1_errors_have_the_openai_shape(gateway: Gateway) -> None:
    _, c, _ = gateway
    resp = await c.get("/v1/nothing", headers=AUTH)
    assert resp.status == 404
    assert (await resp.json())["error"]["type"] == "invalid_request_error"
    resp = await c.get("/v1/chat/completions", headers=AUTH)
    assert resp.status == 405 and "message" in (await resp.json())["error"]
    resp = await c.post("/v1/chat/completions", headers=AUTH, json={"messages": []})
    assert resp.status == 400 and (await resp.json())["error"]["type"] == "invalid_request_error"
    resp = await c.post("/v1/responses", headers=AUTH, json={"input": []})
    assert resp.status == 400 and "message" in (await resp.json())["error"]
    resp = await c.get("/v1/models")
    assert resp.status == 401 and "message" in (await resp.json())["error"]


async def test_responses_plain_and_stream(gateway: Gateway, fake_model: FakeModelServer) -> None:
    client, _, rt = gateway
    done = await client.responses.create(
        model="crosstalk/helper", input="hello there", instructions="Use capitals."
    )
    assert done.output_text == "echo: hello there"
    assert done.model == "crosstalk/helper" and done.status == "completed"
    assert done.usage is not None and done.usage.input_tokens == 10
    assert "Use capitals." in system_text(fake_model.requests[-1])
    stream = await client.responses.create(
        model="crosstalk",
        stream=True,
        user="bob",
        input=[
            {"role": "developer", "content": "Short."},
            {"role": "user", "content": [{"type": "input_text", "text": "one two"}]},
        ],
    )
    events = [e async for e in stream]
    deltas = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert deltas == "echo: one two"
    assert events[-1].type == "response.completed"
    assert events[-1].response.output_text == "echo: one two"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert "Short." in system_text(fake_model.requests[-1])
    assert await rt.store.get_session("agent:main:openai-user:bob") is not None
    fake_model.script(error(500, "boom"))
    failing = await client.responses.create(model="crosstalk", stream=True, input="x")
    last: Any = [e async for e in failing][-1]
    assert last.type == "response.failed" and last.response.status == "failed"
    assert last.response.error.code == "server_error"
