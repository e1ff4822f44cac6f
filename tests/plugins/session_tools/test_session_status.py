"""`session_status` and `/model` (D67) on SQLite and PostgreSQL: the fields, scope (D61), the
owner-only model override that the next turn uses and that survives a restart."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from core.engine.runs import RunRequest
from core.features.commands.parse import parse_command
from core.features.commands.registry import CommandInvocation
from core.model.delivery_context import DeliveryContext
from core.model.inbound import InboundMessage
from core.model.tool_context import ToolContext
from core.runtime import Runtime
from core.store import RunRecord, now_ms
from tests.conftest import RuntimeFactory
from tests.fakes.model import FakeModelServer

MAIN = "agent:main:main"
FRIEND = "agent:main:telegram:dm:friend"


async def ctx_for(rt: Runtime, key: str = MAIN, role: str = "owner") -> ToolContext:
    entry = await rt.services.ensure_session(key)
    return replace(rt.services.context_for(entry), role=role)  # type: ignore[arg-type]


async def status(rt: Runtime, ctx: ToolContext, **args: Any) -> dict[str, Any]:
    return await rt.tools.invoke(rt.tool_env, "session_status", args, ctx)


async def test_fields_of_the_current_session(start: RuntimeFactory) -> None:
    rt = await start()
    ctx = await ctx_for(rt)
    out = await status(rt, ctx)
    assert set(out) == {
        "sessionKey", "kind", "channel", "agentId", "model", "status", "queued", "sendPolicy",
        "route", "tokens", "costUsd", "createdAt", "updatedAt", "subagents",
    }  # fmt: skip
    assert (out["sessionKey"], out["kind"], out["agentId"]) == ("main", "main", "main")
    assert (out["model"], out["status"], out["queued"], out["route"]) == (
        "fake/fake-model",
        "idle",
        0,
        None,
    )
    assert out["sendPolicy"] == {"effective": "allow", "source": "implicit"}
    assert out["tokens"] == {"input": 0, "output": 0} and out["costUsd"] == 0.0
    assert out["subagents"] == {"running": 0, "total": 0}
    await rt.store.update_session(
        MAIN,
        send_policy="deny",
        last_channel="telegram",
        last_to="42",
        input_tokens=7,
        output_tokens=3,
        cost_usd=0.5,
    )
    for i, state in enumerate(("running", "queued", "queued", "ok")):
        await rt.store.create_run(
            RunRecord(id=f"r{i}", session_key=MAIN, status=state, lane="main", deliver=False,
                      created_at=now_ms())
        )  # fmt: skip
    out = await status(rt, ctx, sessionKey="current")
    assert (out["status"], out["queued"]) == ("running", 2)
    assert out["route"] == {"channel": "telegram", "to": "42"}
    assert out["sendPolicy"] == {"effective": "deny", "source": "session"}
    assert out["tokens"] == {"input": 7, "output": 3} and out["costUsd"] == 0.5


async def test_scope_and_the_owner_only_model(start: RuntimeFactory) -> None:
    rt = await start()
    member = await ctx_for(rt, FRIEND, role="member")
    assert await status(rt, member, sessionKey="main") == {
        "status": "error",
        "error": "No session found: main",
    }
    assert (await status(rt, member))["sessionKey"] == FRIEND
    assert await status(rt, member, model="fake/alt") == {
        "status": "forbidden",
        "error": "Only an owner can set a session's model.",
    }
    owner = await ctx_for(rt)
    assert (await status(rt, owner, sessionKey=FRIEND, model="fake/alt"))["model"] == "fake/alt"
    assert await status(rt, owner, model="nope/x") == {
        "status": "error",
        "error": "Unknown model: nope/x",
    }
    cleared = await status(rt, owner, sessionKey=FRIEND, model="default")
    assert cleared["model"] == "fake/fake-model"


async def command(rt: Runtime, text: str, key: str = MAIN) -> str | None:
    parsed = parse_command(text)
    assert parsed is not None
    spec = rt.commands.lookup(parsed)
    assert spec is not None
    entry = await rt.services.ensure_session(key)
    msg = InboundMessage(
        channel="webchat",
        chat_type="direct",
        chat_id="u1",
        sender_id="u1",
        text=text,
        reply_to=DeliveryContext(channel="webchat", to="u1"),
    )
    inv = CommandInvocation(rt.router.command_env, parsed, msg, entry, True)
    return await rt.commands.dispatch(spec, inv)


async def test_model_command_survives_a_restart(
    start: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    extra = {"models": {"providers": {"fake": {"models": [{"id": "fake-model"}, {"id": "alt"}]}}}}
    rt = await start(extra)
    assert await command(rt, "/model") == (
        "⚙️ Model: fake/fake-model (agent default)\nAvailable: fake/fake-model, fake/alt"
    )
    assert (
        await command(rt, "/model nope/x") == "⚙️ Unknown model: nope/x. Send /model to list them."
    )
    assert await command(rt, "/model fake/alt") == "⚙️ Model set to fake/alt for this session."
    status_text = await command(rt, "/status")
    assert status_text is not None and "Model: fake/alt" in status_text
    assert (
        "Status: idle, 0 queued" in status_text and "Sub-agents: 0 running, 0 in all" in status_text
    )
    await rt.stop()
    rt2 = await start(extra)
    entry = await rt2.store.get_session(MAIN)
    assert entry is not None and entry.model == "fake/alt"
    run = await rt2.services.start_run(
        RunRequest(session_key=MAIN, message="hi", context=rt2.services.context_for(entry))
    )
    await rt2.runs.wait(run.id, 30)
    assert fake_model.requests[-1]["model"] == "alt"
    assert await command(rt2, "/model default") == (
        "⚙️ Model override cleared; this session uses fake/fake-model."
    )
    assert (await rt2.store.get_session(MAIN)).model is None  # type: ignore[union-attr]
