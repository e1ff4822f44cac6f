"""`Idempotency-Key` (decision D16): a retried HTTP request never runs a second turn.

The official `openai` SDK talks to the real gateway app; the fake model counts the turns. The
SDK looks at `sys.modules["httpx"]` on every request, and each runtime's warm-up thread imports
that module (through pydantic-ai): imported here first, the SDK never sees it half-initialised.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx  # noqa: F401  # whole before any runtime's warm-up thread imports it (below)
import openai
import pytest
from aiohttp.test_utils import TestClient, TestServer
from sqlalchemy import func, select

from core.edge.http.server import build_app
from core.runtime import Runtime
from core.store.tables import RunRow
from tests.conftest import Client, RuntimeFactory
from tests.fakes.model import FakeModelServer
from tests.fakes.model_script import Reply, RequestJSON, text

AUTH = {"Authorization": "Bearer test-token"}
CONFLICT = {
    "error": {
        "message": "request with this Idempotency-Key is still running",
        "type": "invalid_request_error",
        "code": "idempotency_conflict",
    }
}


@pytest.fixture
async def served(make_runtime: RuntimeFactory) -> AsyncIterator[tuple[Client, Runtime]]:
    rt = await make_runtime()
    async with TestClient(TestServer(build_app(rt, "test-token", []))) as c:
        yield c, rt


def sdk(c: Client) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=str(c.make_url("/v1")), api_key="test-token", max_retries=0)


async def run_count(rt: Runtime) -> int:
    q = select(func.count()).select_from(RunRow.__table__)  # type: ignore[attr-defined]
    return int(await rt.store.read(lambda c: c.execute(q).scalar_one()))


async def ask(client: openai.AsyncOpenAI, said: str, key: str | None) -> Any:
    headers = {"Idempotency-Key": key} if key else {}
    return await client.chat.completions.create(
        model="crosstalk", messages=[{"role": "user", "content": said}], extra_headers=headers
    )


async def test_same_key_twice_is_one_turn_and_the_first_result(
    served: tuple[Client, Runtime], fake_model: FakeModelServer
) -> None:
    c, rt = served
    client = sdk(c)
    first = await ask(client, "hello", "key-1")
    again = await ask(client, "hello", "key-1")
    assert first.choices[0].message.content == "echo: hello"
    assert again.model_dump() == first.model_dump()  # the same body, id included
    assert len(fake_model.requests) == 1 and await run_count(rt) == 1
    other = await ask(client, "hello", "key-2")  # another key is another turn
    assert other.id != first.id and await run_count(rt) == 2
    await ask(client, "hello", None)  # no key: no de-duplication
    assert await run_count(rt) == 3


async def test_repeat_while_running_is_409_then_the_first_result(
    served: tuple[Client, Runtime], fake_model: FakeModelServer
) -> None:
    c, rt = served
    release = asyncio.Event()

    async def slow(body: RequestJSON) -> Reply:
        await release.wait()
        return text("finally")

    fake_model.set_responder(slow)
    client = sdk(c)
    first = asyncio.ensure_future(ask(client, "take your time", "slow-key"))
    await fake_model.wait_for_requests(1)
    with pytest.raises(openai.ConflictError) as info:
        await ask(client, "take your time", "slow-key")
    assert info.value.status_code == 409
    assert info.value.response.json() == CONFLICT
    release.set()
    done = await first
    again = await ask(client, "take your time", "slow-key")
    assert again.model_dump() == done.model_dump()
    assert done.choices[0].message.content == "finally"
    assert len(fake_model.requests) == 1 and await run_count(rt) == 1


async def test_concurrent_requests_with_one_key_run_one_turn(
    served: tuple[Client, Runtime], fake_model: FakeModelServer
) -> None:
    c, rt = served
    body = {"model": "crosstalk", "messages": [{"role": "user", "content": "race"}]}
    headers = {**AUTH, "Idempotency-Key": "race-key"}
    responses = await asyncio.gather(
        *(c.post("/v1/chat/completions", json=body, headers=headers) for _ in range(5))
    )
    statuses = sorted(r.status for r in responses)
    assert statuses.count(200) >= 1 and set(statuses) <= {200, 409}
    ok = [await r.json() for r in responses if r.status == 200]
    assert all(b == ok[0] for b in ok)
    assert len(fake_model.requests) == 1 and await run_count(rt) == 1


async def test_stream_repeat_replays_the_first_answer(
    served: tuple[Client, Runtime], fake_model: FakeModelServer
) -> None:
    c, rt = served
    client = sdk(c)
    headers = {"Idempotency-Key": "stream-key"}

    async def streamed() -> str:
        stream = await client.chat.completions.create(
            model="crosstalk",
            messages=[{"role": "user", "content": "flow"}],
            stream=True,
            extra_headers=headers,
        )
        return "".join([ch.choices[0].delta.content or "" async for ch in stream if ch.choices])

    assert await streamed() == "echo: flow"
    assert await streamed() == "echo: flow"
    assert await run_count(rt) == 1


async def test_bad_key_is_a_400(served: tuple[Client, Runtime]) -> None:
    c, _ = served
    resp = await c.post(
        "/v1/chat/completions",
        json={"messages": [{"role": "user", "content": "x"}]},
        headers={**AUTH, "Idempotency-Key": "k" * 300},
    )
    assert resp.status == 400
    assert (await resp.json())["error"]["message"] == "Idempotency-Key must be 1-255 characters"


async def test_tools_invoke_sessions_send_with_a_key_runs_once(
    served: tuple[Client, Runtime], fake_model: FakeModelServer
) -> None:
    c, rt = served
    call = {
        "tool": "sessions_send",
        "sessionKey": "main",
        "args": {"sessionKey": "agent:main:other", "message": "ping", "timeoutSeconds": 10},
    }
    headers = {**AUTH, "Idempotency-Key": "send-1"}
    first = await c.post("/tools/invoke", json=call, headers=headers)
    first_body = await first.json()
    assert first.status == 200, first_body
    again = await c.post("/tools/invoke", json=call, headers=headers)
    assert again.status == 200 and await again.json() == first_body
    entry = await rt.store.get_session("agent:main:other")
    assert entry is not None
    users = [m for m in await rt.store.history(entry.session_id) if m.role == "user"]
    assert len(users) == 1


async def test_key_survives_a_restart(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await make_runtime()
    async with TestClient(TestServer(build_app(rt, "test-token", []))) as c:
        first = await ask(sdk(c), "remember me", "durable")
    await rt.stop()
    rt2 = await make_runtime()  # same state dir, same database: a restarted gateway
    async with TestClient(TestServer(build_app(rt2, "test-token", []))) as c:
        again = await ask(sdk(c), "remember me", "durable")
    assert again.model_dump() == first.model_dump()
    assert len(fake_model.requests) == 1 and await run_count(rt2) == 1
