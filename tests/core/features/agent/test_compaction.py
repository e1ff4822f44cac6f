"""Compaction (D71) through real turns on SQLite and PostgreSQL: a 120-message conversation is
summarised by the agent's model chain (a failing primary falls back), keeps every message in
history, and sends the model, right after each compaction, the summary and at most
`keepRecent` + 1 messages; the summary's cost counts; `/compact` forces it; `off` keeps the
newest `maxContextMessages`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from core.edge.http.server import build_app
from core.features.agent.compaction import SUMMARY_INSTRUCTIONS, SUMMARY_PREFIX
from core.runtime import Runtime
from tests.conftest import Client, RuntimeFactory
from tests.fakes.model import FakeModelServer, RequestJSON, error, system_text, text
from tests.pg import fresh_pg_database

AUTH = {"Authorization": "Bearer test-token"}
KEY = "agent:main:dm:long"
PRICED = {
    "models": {
        "providers": {
            "fake": {
                "models": [
                    {"id": "fake-model", "cost": {"input": 1, "output": 1}},
                    {"id": "primary", "cost": {"input": 1, "output": 1}},
                ]
            }
        }
    },
    "agents": {
        "defaults": {"model": {"primary": "fake/primary", "fallbacks": ["fake/fake-model"]}}
    },
}


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
async def gateway(
    request: pytest.FixtureRequest, make_runtime: RuntimeFactory
) -> AsyncIterator[Any]:
    async def start(extra: dict[str, Any], url: str | None) -> tuple[Client, Runtime]:
        db = {"gateway": {"database": {"url": url}}} if url else {}
        rt = await make_runtime({**extra, **db})
        client = TestClient(TestServer(build_app(rt, "test-token", [])))
        await client.start_server()
        clients.append(client)
        return client, rt

    clients: list[Client] = []
    if request.param == "sqlite":
        yield lambda extra=PRICED: start(extra, None)
    else:
        async with fresh_pg_database() as url:
            yield lambda extra=PRICED: start(extra, url)
    for c in clients:
        await c.close()


def is_summary(req: RequestJSON) -> bool:
    return SUMMARY_INSTRUCTIONS in system_text(req)


def responder(req: RequestJSON) -> Any:
    if is_summary(req):
        if req.get("model") == "primary":
            return error(500, "primary down")  # the chain's fallback answers (D71)
        n = sum(1 for m in req["messages"] if m.get("role") == "user")
        return text(f"SUMMARY of {n}", prompt_tokens=1000, completion_tokens=10)
    return None  # the echo


async def turn(c: Client, i: int) -> str:
    resp = await c.post(
        "/v1/chat/completions",
        json={"model": "crosstalk", "messages": [{"role": "user", "content": f"m{i}"}]},
        headers={**AUTH, "x-crosstalk-session-key": KEY},
    )
    assert resp.status == 200, await resp.text()
    return str((await resp.json())["choices"][0]["message"]["content"])


async def history(c: Client, **args: Any) -> list[dict[str, Any]]:
    body = {"tool": "sessions_history", "args": {"sessionKey": KEY, "limit": 200, **args}}
    resp = await c.post("/tools/invoke", json=body, headers=AUTH)
    return list((await resp.json())["result"]["details"]["messages"])


def after_system(req: RequestJSON) -> list[dict[str, Any]]:
    return [m for m in req["messages"] if m.get("role") != "system"]


async def test_a_long_conversation_is_summarised_not_forgotten(
    gateway: Any, fake_model: FakeModelServer
) -> None:
    c, rt = await gateway()
    fake_model.set_responder(responder)
    for i in range(60):
        assert await turn(c, i) == f"echo: m{i}"
    turns = [r for r in fake_model.requests if not is_summary(r)]
    summaries = [r for r in fake_model.requests if is_summary(r) and r.get("model") != "primary"]
    assert len(turns) == 60 and len(summaries) >= 2
    for r in turns:
        assert len(after_system(r)) <= 40 + 1
    compacting = [i for i, r in enumerate(turns) if SUMMARY_PREFIX in system_text(r)]
    first = compacting[0]
    assert first == 21  # 42 messages before it: more than 40
    assert len(after_system(turns[first])) == 20 + 1  # keepRecent + its own input
    shrinks = [
        i for i in compacting[1:] if len(after_system(turns[i])) < len(after_system(turns[i - 1]))
    ]
    assert shrinks and all(len(after_system(turns[i])) <= 21 for i in shrinks)
    assert "SUMMARY of" in system_text(turns[-1])
    plain = await history(c)
    assert [m["content"][0]["text"] for m in plain[::2]] == [f"m{i}" for i in range(60)]
    assert len(plain) == 120 and {m["role"] for m in plain} == {"user", "assistant"}
    full = await history(c, includeSummaries=True)
    stored = [m for m in full if m["role"] == "summary"]
    assert len(stored) == len(summaries) and stored[0]["content"][0]["text"].startswith("SUMMARY")
    entry = await rt.store.get_session(KEY)
    assert entry is not None and entry.cost_usd is not None
    summary_cost = len(summaries) * 1010 / 1_000_000
    assert entry.cost_usd >= summary_cost  # the summary requests are priced like the turns'


async def test_compact_command_and_mode_off(gateway: Any, fake_model: FakeModelServer) -> None:
    c, rt = await gateway()
    fake_model.set_responder(responder)
    for i in range(15):
        await turn(c, i)
    entry = await rt.store.get_session(KEY)
    assert entry is not None
    from core.api.sessions import compact_now

    assert await compact_now(rt.services, entry, 1) == 30 - 20
    assert [m["role"] for m in await history(c, includeSummaries=True)].count("summary") == 1
    assert await compact_now(rt.services, entry, 2) == 0  # nothing beyond keepRecent now
    await turn(c, 99)
    last = [r for r in fake_model.requests if not is_summary(r)][-1]
    assert SUMMARY_PREFIX in system_text(last) and len(after_system(last)) == 20 + 1

    c2, _ = await gateway(
        {
            "agents": {
                "defaults": {
                    "compaction": {"mode": "off", "maxContextMessages": 10, "keepRecent": 4}
                }
            }
        }
    )
    fake_model.requests.clear()
    for i in range(10):
        resp = await c2.post(
            "/v1/chat/completions",
            json={"model": "crosstalk", "messages": [{"role": "user", "content": f"o{i}"}]},
            headers={**AUTH, "x-crosstalk-session-key": "agent:main:dm:off"},
        )
        assert resp.status == 200
    assert not any(is_summary(r) for r in fake_model.requests)
    assert len(after_system(fake_model.requests[-1])) == 10 + 1


async def test_compact_in_the_chat(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    """`/compact` through the command registry, on the router's command environment."""
    from core.features.commands.parse import parse_command
    from core.features.commands.registry import CommandInvocation
    from core.model.delivery_context import DeliveryContext
    from core.model.inbound import InboundMessage

    rt = await make_runtime(
        {"agents": {"defaults": {"compaction": {"maxContextMessages": 10, "keepRecent": 2}}}}
    )
    fake_model.set_responder(responder)
    async with TestClient(TestServer(build_app(rt, "test-token", []))) as c:
        for i in range(3):
            await turn(c, i)
    parsed = parse_command("/compact")
    assert parsed is not None
    spec = rt.commands.lookup(parsed)
    assert spec is not None
    entry = await rt.store.get_session(KEY)
    assert entry is not None
    msg = InboundMessage(
        channel="webchat",
        chat_type="direct",
        chat_id="u1",
        sender_id="u1",
        text="/compact",
        reply_to=DeliveryContext(channel="webchat", to="u1"),
    )
    inv = CommandInvocation(rt.router.command_env, parsed, msg, entry, True)
    assert await rt.commands.dispatch(spec, inv) == "🗜️ Compacted 4 messages."
    kept = await rt.store.history(entry.session_id, include_summaries=True)
    assert [m.role for m in kept][-1] == "summary" and len(kept) == 7
