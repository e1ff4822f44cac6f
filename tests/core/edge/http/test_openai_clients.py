"""D80: the OpenAI API as clients expect it, driven by the real `openai` SDK with its default
retries: a session per conversation (never the main one), the client's history as the context
of a new session, `model` names, and automatic retries that store nothing twice."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import openai
import pytest
from aiohttp.test_utils import TestClient, TestServer

from core.edge.http.server import build_app
from core.runtime import Runtime
from tests.conftest import Client, RuntimeFactory
from tests.fakes.model import FakeModelServer, error, last_user_text, messages

AUTH = {"Authorization": "Bearer test-token"}
Gateway = tuple[openai.AsyncOpenAI, Client, Runtime]


@pytest.fixture
async def gateway(make_runtime: RuntimeFactory) -> AsyncIterator[Gateway]:
    rt = await make_runtime({"agents": {"list": [{"id": "main"}, {"id": "helper"}]}})
    assert rt.warmup is not None
    await rt.warmup
    async with TestClient(TestServer(build_app(rt, "test-token", []))) as c:
        client = openai.AsyncOpenAI(base_url=str(c.make_url("/v1")), api_key="test-token")
        yield client, c, rt  # the SDK's defaults: max_retries=2
        await client.close()


async def session_keys(c: Client) -> list[str]:
    """Sessions with messages (`/tools/invoke` itself makes the requester's `main` row)."""
    resp = await c.post(
        "/tools/invoke",
        headers=AUTH,
        json={"tool": "sessions_list", "args": {"limit": 200, "messageLimit": 1}},
    )
    body: Any = await resp.json()
    return sorted(r["key"] for r in body["result"]["details"]["sessions"] if r.get("messages"))


async def transcript(rt: Runtime, key: str) -> list[tuple[str, str]]:
    entry = await rt.store.get_session(key)
    assert entry is not None, key
    return [(m.role, m.plain_text()) for m in await rt.store.history(entry.session_id)]


async def test_two_conversations_without_user_are_two_sessions_neither_main(
    gateway: Gateway, fake_model: FakeModelServer
) -> None:
    client, c, rt = gateway
    chats: dict[str, list[Any]] = {"a": [], "b": []}
    for turn in range(3):
        for name, conversation in chats.items():
            conversation.append({"role": "user", "content": f"{name}{turn}"})
            done = await client.chat.completions.create(
                model="crosstalk",
                messages=[{"role": "system", "content": "be kind"}, *conversation],
            )
            conversation.append({"role": "assistant", "content": done.choices[0].message.content})
    keys = await session_keys(c)
    assert len(keys) == 2 and all(k.startswith("agent:main:openai:") for k in keys), keys
    assert "agent:main:main" not in keys
    for key in keys:
        said = await transcript(rt, key)
        name = said[0][1][0]
        assert said == [
            (role, text)
            for t in range(3)
            for role, text in (("user", f"{name}{t}"), ("assistant", f"echo: {name}{t}"))
        ]
    # the model saw each conversation once, from the session's own transcript
    last = fake_model.requests[-1]
    assert [m["content"] for m in messages(last) if m.get("role") == "user"] == ["b0", "b1", "b2"]


async def test_a_client_history_is_the_context_of_a_new_session(
    gateway: Gateway, fake_model: FakeModelServer
) -> None:
    client, c, rt = gateway
    history: list[Any] = [
        {"role": "user", "content": "my name is Ada"},
        {"role": "assistant", "content": "Hello Ada"},
    ]
    await client.chat.completions.create(
        model="crosstalk", messages=[*history, {"role": "user", "content": "who am I?"}]
    )
    sent = messages(fake_model.requests[-1])
    assert [m["content"] for m in sent if m["role"] in ("user", "assistant")] == [
        "my name is Ada",
        "Hello Ada",
        "who am I?",
    ]
    (key,) = await session_keys(c)
    assert [t for _, t in await transcript(rt, key)] == [
        "my name is Ada",
        "Hello Ada",
        "who am I?",
        "echo: who am I?",
    ]
    # an edited history is another conversation: a new session, seeded with it
    await client.chat.completions.create(
        model="crosstalk",
        messages=[*history[:1], {"role": "assistant", "content": "Hi!"}, history[0]],
    )
    assert len(await session_keys(c)) == 2
    # with `user`, a session that has a transcript keeps it: the client's history is ignored
    await client.chat.completions.create(
        model="crosstalk", user="ada", messages=[{"role": "user", "content": "first"}]
    )
    await client.chat.completions.create(
        model="crosstalk",
        user="ada",
        messages=[{"role": "user", "content": "invented"}, {"role": "user", "content": "next"}],
    )
    assert [t for _, t in await transcript(rt, "agent:main:openai-user:ada")] == [
        "first",
        "echo: first",
        "next",
        "echo: next",
    ]


async def test_model_names(gateway: Gateway, fake_model: FakeModelServer) -> None:
    client, c, rt = gateway
    for name in ("gpt-4o", "crosstalk/nope", "nope/fake-model", "main"):
        with pytest.raises(openai.NotFoundError) as info:
            await client.chat.completions.create(
                model=name, messages=[{"role": "user", "content": "hi"}]
            )
        assert info.value.body == {
            "message": f"model not found: {name}",
            "type": "invalid_request_error",
            "code": "model_not_found",
        }
    assert fake_model.requests == [] and await session_keys(c) == []
    done = await client.chat.completions.create(
        model="fake/other-model", messages=[{"role": "user", "content": "hi"}]
    )
    assert done.model == "fake/other-model"
    assert fake_model.requests[-1]["model"] == "other-model"  # this request's model (D80)
    done = await client.chat.completions.create(
        model="crosstalk/helper", messages=[{"role": "user", "content": "hi"}]
    )
    assert done.model == "crosstalk/helper"
    assert fake_model.requests[-1]["model"] == "fake-model"
    assert await rt.store.get_session("agent:helper:main") is None


async def test_sdk_retries_store_nothing_twice_and_call_the_provider_once(
    gateway: Gateway, fake_model: FakeModelServer
) -> None:
    client, c, rt = gateway
    fake_model.set_responder(lambda body: error(500, "upstream exploded"))
    with pytest.raises(openai.InternalServerError):
        await client.chat.completions.create(
            model="crosstalk", messages=[{"role": "user", "content": "only once"}]
        )
    retried_calls = len(fake_model.requests)
    (key,) = await session_keys(c)
    assert await transcript(rt, key) == [("user", "only once")]  # one user row
    # one provider call chain: as many upstream calls as a request nobody retried makes
    once = openai.AsyncOpenAI(base_url=client.base_url, api_key="test-token", max_retries=0)
    with pytest.raises(openai.InternalServerError):
        await once.chat.completions.create(
            model="crosstalk", messages=[{"role": "user", "content": "not retried"}]
        )
    await once.close()
    assert retried_calls == len(fake_model.requests) - retried_calls >= 1
    assert all(last_user_text(r) == "only once" for r in fake_model.requests[:retried_calls])

    # the same body sent again later by the application (no retry header) is a new turn
    fake_model.set_responder(None)
    plain = {"messages": [{"role": "user", "content": "twice"}], "user": "u"}
    for _ in range(2):
        resp = await c.post("/v1/chat/completions", headers=AUTH, json=plain)
        assert resp.status == 200
    assert [t for _, t in await transcript(rt, "agent:main:openai-user:u")].count("twice") == 2


async def test_a_retry_with_its_first_attempt_still_running_gets_its_answer(
    gateway: Gateway, fake_model: FakeModelServer
) -> None:
    _, c, rt = gateway
    body = {"messages": [{"role": "user", "content": "slow"}], "user": "s"}
    first = await c.post(
        "/v1/chat/completions", headers={**AUTH, "x-stainless-retry-count": "0"}, json=body
    )
    assert first.status == 200
    again = await c.post(
        "/v1/chat/completions", headers={**AUTH, "x-stainless-retry-count": "1"}, json=body
    )
    assert again.status == 200
    assert (await again.json())["choices"] == (await first.json())["choices"]
    assert [t for _, t in await transcript(rt, "agent:main:openai-user:s")] == [
        "slow",
        "echo: slow",
    ]


async def test_a_responses_client_continues_by_previous_response_id(
    gateway: Gateway, fake_model: FakeModelServer
) -> None:
    """D194: a client that chains responses sends only the new input; it used to start a new
    conversation each time (the id was ignored), so the model never saw what came before."""
    client, _, rt = gateway
    first = await client.responses.create(model="crosstalk/helper", input="my name is Ada")
    second = await client.responses.create(
        model="crosstalk/helper", input="what is my name?", previous_response_id=first.id
    )
    assert second.output_text == "echo: what is my name?" and second.id != first.id
    seen = [m["content"] for m in messages(fake_model.requests[-1]) if m["role"] != "system"]
    assert seen == ["my name is Ada", "echo: my name is Ada", "what is my name?"]
    run = await rt.store.get_run(str(uuid.UUID(second.id.removeprefix("resp_"))))
    assert run is not None and run.session_key.startswith("agent:helper:openai:")
    key = run.session_key
    assert [t for _, t in await transcript(rt, key)] == [
        "my name is Ada",
        "echo: my name is Ada",
        "what is my name?",
        "echo: what is my name?",
    ]
    stream = await client.responses.create(
        model="crosstalk/helper", input="and now?", previous_response_id=second.id, stream=True
    )
    events = [e async for e in stream]
    assert events[-1].type == "response.completed"
    assert [t for _, t in await transcript(rt, key)][-2:] == ["and now?", "echo: and now?"]
    for unknown in ("resp_" + "0" * 32, "resp_nope", first.id.upper()):
        with pytest.raises(openai.NotFoundError) as info:
            await client.responses.create(input="x", previous_response_id=unknown)
        body: Any = info.value.body
        assert body["message"] == f"Previous response with id '{unknown}' not found."
        assert body["code"] == "previous_response_not_found"


async def test_a_user_of_only_separators_names_no_session(
    gateway: Gateway, fake_model: FakeModelServer
) -> None:
    """D195: `user: ":"` put every such client into one `openai-user` session."""
    client, c, _ = gateway
    for user, said in ((":", "first"), (" : ", "second")):
        await client.chat.completions.create(
            model="crosstalk", user=user, messages=[{"role": "user", "content": said}]
        )
    keys = await session_keys(c)
    assert "agent:main:openai-user" not in keys
    assert len([k for k in keys if k.startswith("agent:main:openai:")]) == 2
