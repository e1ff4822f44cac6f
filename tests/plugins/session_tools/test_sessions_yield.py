"""`sessions_yield` (D69, D112) on SQLite and PostgreSQL, through real agent turns against the
loopback fake model: a yielded turn says nothing and makes no further model request, the
sub-agent's announce is the session's next turn (run as the turn that yielded, answered in its
chat), a message that comes first is the next turn instead, nothing to wait for is the error
answer and the turn goes on; and the same answers over `/tools/invoke`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from core.config import CrosstalkConfig
from core.edge.http.server import build_app
from core.engine.runs import RunRequest
from core.runtime import Runtime
from core.store import RunRecord
from tests.core.features.subagents.helpers import (
    CHAT,
    OWNER_CONFIG,
    REQUESTER,
    RecordingAdapter,
    is_announce_step,
    is_child,
    transcript,
)
from tests.fakes.model import FakeModelServer, Reply, RequestJSON, text, tool_call
from tests.fakes.model_script import last_message, last_user_text, tool_results
from tests.pg import fresh_pg_database
from tests.polling import eventually
from tests.running import running

NOTHING = "No sub-agent is running; nothing to wait for."
AUTH = {"Authorization": "Bearer test-token"}
Configs = Callable[[dict[str, Any] | None], CrosstalkConfig]


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
async def configs(
    request: pytest.FixtureRequest, make_config: Callable[..., CrosstalkConfig]
) -> AsyncIterator[Configs]:
    db: dict[str, Any] = {}

    def config(extra: dict[str, Any] | None = None) -> CrosstalkConfig:
        return make_config({**OWNER_CONFIG, **db, **(extra or {})})

    if request.param == "sqlite":
        yield config
        return
    async with fresh_pg_database() as url:
        db["gateway"] = {"database": {"url": url}}
        yield config


def last_tool_result(req: RequestJSON) -> dict[str, Any]:
    results = tool_results(req)
    return json.loads(results[-1]["content"]) if results else {}


class Requester:
    """The requester's model: spawn, then yield; after an announce, sum up. Records whether it
    was ever asked again after a yield (it must not be)."""

    def __init__(self, gate: asyncio.Event) -> None:
        self.gate = gate
        self.after_yield = 0

    async def __call__(self, req: RequestJSON) -> Reply | None:
        if is_announce_step(req):
            return text("Result: found 3 things")
        if is_child(req):
            await self.gate.wait()
            return text("result text")
        if last_message(req).get("role") == "tool":
            out = last_tool_result(req)
            if out.get("status") == "accepted":  # sessions_spawn
                return tool_call("sessions_yield", {})
            if out.get("status") == "yielded":
                self.after_yield += 1
                return text("asked after the yield")
            return text(f"carrying on: {out.get('error')}")
        said = last_user_text(req)
        if said.startswith("Status: success"):
            return text("The researcher found 3 things.")
        if said.startswith("spawn"):
            return tool_call("sessions_spawn", {"task": "research things"})
        if said.startswith("wait"):
            return tool_call("sessions_yield", {})
        return text(f"echo: {said}")


async def yielded_run(rt: Runtime, key: str = REQUESTER) -> RunRecord:
    async def check() -> RunRecord | None:
        run = await rt.store.last_run(key)
        if run is not None and run.status == "ok" and (run.meta or {}).get("yielded"):
            return run
        return None

    return await eventually(check, 30, "the yielded turn ends")


async def test_the_announce_is_the_next_turn(configs: Configs, fake_model: FakeModelServer) -> None:
    gate = asyncio.Event()
    model = Requester(gate)
    fake_model.set_responder(model)
    adapter = RecordingAdapter()
    async with running(configs(None), adapter) as rt:
        await adapter.say("spawn a researcher")
        run = await yielded_run(rt)
        assert run.meta is not None and run.meta["yielded"] is True
        assert adapter.sent == []  # nothing is delivered for the yielded turn
        asked = len(fake_model.requests)
        gate.set()
        [(target, _)] = await adapter.wait_for("The researcher found 3 things.", timeout=30)
        assert target.to == CHAT
        texts = [t for _, t in adapter.sent]
        assert texts[0].startswith("Status: success\n\nResult:\nfound 3 things")
        assert texts[1:] == ["The researcher found 3 things."]  # the requester's next turn
        turns = [r for r in fake_model.requests[asked:] if not is_child(r)]
        turns = [r for r in turns if not is_announce_step(r)]
        assert [last_user_text(r)[:16] for r in turns] == ["Status: success\n"]
        assert model.after_yield == 0
        msgs = await transcript(rt, REQUESTER)
        tool_rows = [m for m in msgs if m.tool_name == "sessions_yield"]
        assert [m.role for m in tool_rows] == ["toolResult"]
        assert json.loads(tool_rows[0].plain_text()) == {"status": "yielded"}
        announce = [m for m in msgs if m.meta and m.meta.get("announce")]
        assert [m.role for m in announce] == ["user"]  # the input of the resumed turn
        assert await rt.store.take_yield(REQUESTER) is None  # taken once


async def test_a_streamed_turn_yields_with_no_preview_and_no_request(
    configs: Configs, fake_model: FakeModelServer
) -> None:
    """D147: once the turn yielded, its model wrapper answers the next request itself, streamed
    or not; a streamed turn shows nothing of that stand-in answer."""
    model = Requester(asyncio.Event())
    fake_model.set_responder(model)
    async with running(configs(None), RecordingAdapter()) as rt:
        entry = await rt.services.ensure_session(REQUESTER)
        deltas: list[str] = []

        async def on_delta(text: str) -> None:
            deltas.append(text)

        run = await rt.services.start_run(
            RunRequest(
                session_key=REQUESTER,
                message="spawn a researcher",
                context=rt.services.context_for(entry),
                on_delta=on_delta,
            )
        )
        outcome = await rt.runs.wait(run.id, 30)
        assert (outcome.status, outcome.reply) == ("ok", None)
        assert model.after_yield == 0
        assert deltas == []
        mine = [r for r in fake_model.requests if not is_child(r)]
        assert len(mine) == 2 and all(r.get("stream") for r in mine)  # spawn, then yield
        msgs = await transcript(rt, REQUESTER)
        assert not any("(yielded)" in m.plain_text() for m in msgs)
        model.gate.set()


async def test_nothing_to_wait_for_and_the_turn_goes_on(
    configs: Configs, fake_model: FakeModelServer
) -> None:
    fake_model.set_responder(Requester(asyncio.Event()))
    adapter = RecordingAdapter()
    async with running(configs(None), adapter) as rt:
        await adapter.say("wait for nothing")
        [(_, reply)] = await adapter.wait_for("carrying on", timeout=30)
        assert reply == f"carrying on: {NOTHING}"
        assert last_tool_result(fake_model.requests[-1]) == {"status": "error", "error": NOTHING}
        assert await rt.store.take_yield(REQUESTER) is None


async def test_a_message_that_comes_first_is_the_next_turn(
    configs: Configs, fake_model: FakeModelServer
) -> None:
    gate = asyncio.Event()
    fake_model.set_responder(Requester(gate))
    adapter = RecordingAdapter()
    async with running(configs(None), adapter) as rt:
        await adapter.say("spawn a researcher")
        await yielded_run(rt)
        await adapter.say("are you there?")
        await adapter.wait_for("echo: are you there?", timeout=30)
        gate.set()
        await adapter.wait_for("Status: success", timeout=30)

        async def appended() -> bool:
            msgs = await transcript(rt, REQUESTER)
            return any(m.meta and m.meta.get("announce") for m in msgs)

        await eventually(appended, 10, "the announce joins the transcript")
        msgs = await transcript(rt, REQUESTER)
        announce = [m for m in msgs if m.meta and m.meta.get("announce")]
        assert [m.role for m in announce] == ["assistant"]  # no turn of its own
        assert not any(
            last_user_text(r).startswith("Status:")
            for r in fake_model.requests
            if not is_announce_step(r)
        )


async def test_over_tools_invoke(configs: Configs, fake_model: FakeModelServer) -> None:
    gate = asyncio.Event()
    fake_model.set_responder(Requester(gate))
    adapter = RecordingAdapter()
    async with running(configs(None), adapter) as rt:
        async with TestClient(TestServer(build_app(rt, "test-token", []))) as c:

            async def invoke(tool: str, args: dict[str, Any]) -> dict[str, Any]:
                body = {"tool": tool, "args": args, "sessionKey": "main"}
                resp = await c.post("/tools/invoke", json=body, headers=AUTH)
                assert resp.status == 200, await resp.text()
                out: dict[str, Any] = (await resp.json())["result"]["details"]
                return out

            assert await invoke("sessions_yield", {}) == {"status": "error", "error": NOTHING}
            spawned = await invoke("sessions_spawn", {"task": "research things"})
            assert spawned["status"] == "accepted"
            assert await invoke("sessions_yield", {}) == {"status": "yielded"}
            gate.set()

            async def resumed() -> bool:
                return any(
                    last_user_text(r).startswith("Status: success")
                    and not is_announce_step(r)
                    and not is_child(r)
                    for r in fake_model.requests
                )

            await eventually(resumed, 30, "the announce starts the session's next turn")
            run = await rt.store.last_run(REQUESTER)
            assert run is not None and (run.meta or {}).get("resumedBy") == spawned["runId"]
