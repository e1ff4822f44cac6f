"""`/subagents list|stop|log|info|send|help` in the requester's chat (R4.10)."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from core.runtime import Runtime
from core.store.subagents import SubagentRecord
from plugins.chat_commands.subagents import HELP, resolve_target
from tests.conftest import RuntimeFactory, deep_merge
from tests.core.features.subagents.helpers import (
    OWNER_CONFIG,
    REQUESTER,
    RecordingAdapter,
    Script,
    record_state,
    spawn_tool,
    transcript,
)
from tests.fakes.model import FakeModelServer, Reply, RequestJSON, last_user_text, text
from tests.polling import eventually as until


async def command(adapter: RecordingAdapter, line: str, sender: str = "owner-1") -> str:
    before = len(adapter.sent)
    await adapter.say(line, sender=sender)
    assert len(adapter.sent) == before + 1, adapter.sent[before:]
    return adapter.sent[-1][1]


async def setup(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> tuple[Runtime, RecordingAdapter, asyncio.Event, list[dict[str, Any]]]:
    """Two sub-agents of the owner's main session: `first` finished, `second` running."""
    gate = asyncio.Event()

    async def child(req: RequestJSON) -> Reply:
        task = last_user_text(req)
        if task == "second task":
            await gate.wait()
        return text(f"answer to {task}")

    fake_model.set_responder(Script(child=child))
    adapter = RecordingAdapter()
    rt = await make_runtime(OWNER_CONFIG, adapters=[adapter])
    first = await spawn_tool(rt, task="first task", label="first")
    await record_state(rt, first["runId"], ("done",))
    second = await spawn_tool(rt, task="second task", label="second")
    await fake_model.wait_for_requests(3)
    return rt, adapter, gate, [first, second]


async def test_non_owner_is_refused(make_runtime: RuntimeFactory) -> None:
    adapter = RecordingAdapter()
    open_dms = {"channels": {"telegram": {"dmPolicy": "open"}}}  # admit "stranger" (D11)
    await make_runtime(deep_merge(OWNER_CONFIG, open_dms), adapters=[adapter])
    assert (
        await command(adapter, "/subagents list", sender="stranger")
        == "⚙️ /subagents is owner-only."
    )


async def test_list_with_none(make_runtime: RuntimeFactory) -> None:
    adapter = RecordingAdapter()
    await make_runtime(OWNER_CONFIG, adapters=[adapter])
    assert await command(adapter, "/subagents") == "🧭 Subagents: none for this session."
    assert await command(adapter, "/subagents list") == "🧭 Subagents: none for this session."
    assert await command(adapter, "/subagents help") == HELP


async def test_list_info_log_stop_send(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt, adapter, gate, (first, second) = await setup(make_runtime, fake_model)
    listing = (await command(adapter, "/subagents list")).split("\n")
    assert listing[0] == "🧭 Subagents (2):"
    assert re.fullmatch(rf"1\. first — success · \d+s · run {first['runId'][:8]}", listing[1])
    assert re.fullmatch(rf"2\. second — running · \d+s · run {second['runId'][:8]}", listing[2])

    info = (await command(adapter, "/subagents info 1")).split("\n")
    assert info[0] == "ℹ️ Subagent first"
    assert "Status: success" in info and "Task: first task" in info
    assert f"Run: {first['runId']}" in info and f"Session: {first['childSessionKey']}" in info
    assert "Cleanup: keep" in info and "Announce: done" in info
    assert (await command(adapter, f"/subagents info {second['runId'][:6]}")).startswith(
        "ℹ️ Subagent second\nStatus: running"
    )
    assert (await command(adapter, f"/subagents info {first['childSessionKey']}")).startswith(
        "ℹ️ Subagent first"
    )

    log = (await command(adapter, "/subagents log 1 2")).split("\n")
    assert log == [
        "🧾 Log of first (last 2):",
        "user: Sub-agent announce step.",
        "assistant: Result: found 3 things Notes: - check X",
    ]
    log = (await command(adapter, "/subagents log first-not-an-id")).split("\n")
    assert log == ["Unknown subagent id: first-not-an-id"]
    full = (await command(adapter, "/subagents log 1 tools")).split("\n")
    assert full[1:3] == ["user: first task", "assistant: answer to first task"]

    assert await command(adapter, "/subagents stop 1") == "⚙️ Sub-agent first is not running."
    assert await command(adapter, "/subagents stop last") == "⚙️ Stopped sub-agent second."
    await record_state(rt, second["runId"], ("stopped",))

    async def aborted() -> bool:
        rec = await rt.subagents.get(second["runId"])
        return rec is not None and rec.outcome == "aborted"

    await until(aborted, what="second aborted")
    assert "— stopped ·" in await command(adapter, "/subagents list")
    assert await command(adapter, "/subagents stop all") == "⚙️ No running sub-agents."

    reply = await command(adapter, "/subagents send 1 what did you find?")
    assert reply == f"✅ Sent to first (run {reply.split('(run ')[1][:8]}). See /subagents log 1."

    async def answered() -> bool:
        msgs = await transcript(rt, first["childSessionKey"])
        return msgs[-1].plain_text() == "answer to what did you find?"

    await until(answered, what="reply of the sub-agent to /subagents send")
    [asked] = [m for m in await transcript(rt, first["childSessionKey"]) if m.role == "user"][-1:]
    sent_run = await rt.store.get_run(asked.run_id or "")
    assert sent_run is not None  # the run carries who sent it, for limits and rules (D149)
    assert (sent_run.meta or {})["request"]["sender"] == f"{adapter.channel}:owner-1"
    # no second announce for a message sent with /subagents send
    assert len([d for d in await rt.store.list_deliveries() if d.kind == "announce"]) == 1
    gate.set()


async def test_target_errors(make_runtime: RuntimeFactory, fake_model: FakeModelServer) -> None:
    _, adapter, gate, _ = await setup(make_runtime, fake_model)
    assert await command(adapter, "/subagents info") == "Missing subagent id."
    assert await command(adapter, "/subagents info 3") == "Invalid subagent index: 3"
    assert await command(adapter, "/subagents info 0") == "Invalid subagent index: 0"
    assert await command(adapter, "/subagents log zzz") == "Unknown subagent id: zzz"
    assert (
        await command(adapter, "/subagents info agent:main:subagent:nope")
        == "Unknown subagent session: agent:main:subagent:nope"
    )
    assert (
        await command(adapter, "/subagents send 1") == "⚙️ Usage: /subagents send <id|#> <message>"
    )
    assert await command(adapter, "/subagents bogus") == HELP
    gate.set()


def test_resolve_target_prefixes() -> None:
    recs = [
        SubagentRecord(
            run_id=rid,
            child_key=f"agent:main:subagent:{rid}",
            requester_key=REQUESTER,
            task="t",
            created_at=i,
        )
        for i, rid in enumerate(("abc123", "abd456", "ffff"))
    ]
    assert resolve_target(recs, "ab") == "Ambiguous run id prefix: ab"
    assert resolve_target(recs, "abc") is recs[0]
    assert resolve_target(recs, "LAST") is recs[2]
    assert resolve_target(recs, "2") is recs[1]
    assert resolve_target(recs, "AGENT:main:subagent:ffff") is recs[2]
    assert resolve_target([], "last") == "Unknown subagent id: last"
    assert resolve_target(recs, " ") == "Missing subagent id."


def test_resolve_target_run_id_prefix_made_of_digits() -> None:
    """The flake of test_list_info_log_stop_send: `/subagents info <6 hex>` whose prefix
    happened to be all digits was read as a list index ("Invalid subagent index")."""
    recs = [
        SubagentRecord(
            run_id=rid,
            child_key=f"agent:main:subagent:{rid}",
            requester_key=REQUESTER,
            task="t",
            created_at=i,
        )
        for i, rid in enumerate(("0a1b2c", "123456ab-cdef", "3333aa"))
    ]
    assert resolve_target(recs, "123456") is recs[1]
    assert resolve_target(recs, "2") is recs[1]  # a list index still wins
    assert resolve_target(recs, "4") == "Invalid subagent index: 4"
    assert resolve_target(recs, "333") == "Invalid subagent index: 333"  # too short a prefix
    assert resolve_target(recs, "3333") is recs[2]
    assert resolve_target(recs, "0") == "Invalid subagent index: 0"
