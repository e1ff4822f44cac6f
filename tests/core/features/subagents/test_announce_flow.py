"""Spawn → child run → announce step → post to the requester's chat (D6, R4.8–R4.10).

The requester is driven through a recording chat adapter, so the whole path is real: router,
agent turn with the `sessions_spawn` tool call, the `subagent` lane, the announce step in the
child session, the outbound gate and the delivery log.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from core.model.keys import is_subagent_key
from core.runtime import Runtime
from core.store.subagents import SubagentRecord
from tests.conftest import RuntimeFactory
from tests.core.features.subagents.helpers import (
    CHAT,
    OWNER_CONFIG,
    REQUESTER,
    RecordingAdapter,
    Script,
    is_child,
    record_state,
    transcript,
)
from tests.fakes.model import FakeModelServer, delay, error, system_text, text
from tests.polling import eventually as until

STATS = re.compile(
    r"^Stats: runtime (\d+s|n/a) • tokens (\S+) \(in \S+ / out \S+\) • "
    r"sessionKey (agent:main:subagent:[0-9a-f-]{36}) • sessionId ([0-9a-f-]{36}) • "
    r"transcript (\S+\.jsonl)$"
)


async def spawn_via_chat(
    rt_factory: RuntimeFactory,
    fake_model: FakeModelServer,
    script: Script,
    extra: dict[str, Any] | None = None,
) -> tuple[Runtime, RecordingAdapter]:
    adapter = RecordingAdapter()
    fake_model.set_responder(script)
    rt = await rt_factory({**OWNER_CONFIG, **(extra or {})}, adapters=[adapter])
    await adapter.say("spawn a researcher")
    await adapter.wait_for("spawned")
    return rt, adapter


async def only_record(rt: Runtime) -> SubagentRecord:
    records = await rt.store.list_subagent_runs()
    assert len(records) == 1
    return records[0]


async def test_announce_is_posted_to_the_requester_chat_and_transcript(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    script = Script(spawn_args={"task": "research things", "label": "my-task"})
    rt, adapter = await spawn_via_chat(make_runtime, fake_model, script)
    [(target, posted)] = await adapter.wait_for("Status:")
    assert target.channel == "telegram" and target.to == CHAT
    head, stats = posted.rsplit("\n\n", 1)
    assert head == ("Status: success\n\nResult:\nfound 3 things\n\nNotes:\n- check X")
    match = STATS.match(stats)
    assert match is not None, stats
    rec = await only_record(rt)
    assert match.group(3) == rec.child_key
    child = await rt.store.get_session(rec.child_key)
    assert child is not None and match.group(4) == child.session_id
    assert match.group(5).endswith(f"{child.session_id}.jsonl")
    # the requester agent learns the result too: an assistant message marked as an announce
    msgs = await transcript(rt, REQUESTER)
    announced = [m for m in msgs if m.meta and m.meta.get("announce")]
    assert [m.plain_text() for m in announced] == [posted]
    assert announced[0].role == "assistant"
    assert announced[0].meta is not None and announced[0].meta["delivery"] == "delivered"
    rows = [d for d in await rt.store.list_deliveries() if d.kind == "announce"]
    assert [(d.outcome, d.session_key, d.to) for d in rows] == [("delivered", REQUESTER, CHAT)]
    done = await record_state(rt, rec.run_id, ("done",))
    assert done.outcome == "ok" and done.reply == "result text" and done.announced_at


async def test_child_run_gets_the_subagent_prompt_lane_and_no_delivery(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    script = Script(spawn_args={"task": "  look   into\nit ", "label": "probe"})
    rt, adapter = await spawn_via_chat(make_runtime, fake_model, script)
    await adapter.wait_for("Status:")
    rec = await only_record(rt)
    child_reqs = [r for r in fake_model.requests if is_child(r)]
    assert len(child_reqs) == 1
    system = system_text(child_reqs[0])
    extra = system[system.index("# Subagent Context") :]
    assert "- You were created to handle: look into it" in extra
    assert extra.endswith(
        f"- Label: probe\n- Requester session: {REQUESTER}.\n"
        f"- Requester channel: telegram.\n"
        f"- Your session: {rec.child_key}."
    )
    run = await rt.store.get_run(rec.run_id)
    assert run is not None and run.meta is not None
    assert run.lane == "subagent" and run.deliver is False and run.meta["hops"] == 1
    entry = await rt.store.get_session(rec.child_key)
    assert entry is not None and entry.spawned_by == REQUESTER and entry.label == "probe"
    # deliver:false — nothing of the child's own reply reached the chat
    assert not any("result text" == t for _, t in adapter.sent)


async def test_announce_skip_posts_nothing(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    script = Script(announce=text("  ANNOUNCE_SKIP \n"))
    rt, adapter = await spawn_via_chat(make_runtime, fake_model, script)
    rec = await only_record(rt)
    await record_state(rt, rec.run_id, ("skipped",))
    assert adapter.texts("Status:") == []
    assert not [d for d in await rt.store.list_deliveries() if d.kind == "announce"]
    msgs = await transcript(rt, REQUESTER)
    assert not [m for m in msgs if m.meta and m.meta.get("announce")]


async def test_announce_skip_is_exact(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    script = Script(announce=text("ANNOUNCE_SKIP."))
    _, adapter = await spawn_via_chat(make_runtime, fake_model, script)
    [(_, posted)] = await adapter.wait_for("Status:")
    assert "Result:\nANNOUNCE_SKIP.\n" in posted


async def test_failed_child_is_announced_with_error_status(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    script = Script(
        child=error(500, "boom"),
        announce=text("**Result:** nothing, the model failed\n- **Notes:** none"),
    )
    _, adapter = await spawn_via_chat(make_runtime, fake_model, script)
    [(_, posted)] = await adapter.wait_for("Status:")
    lines = posted.split("\n")
    assert lines[:5] == ["Status: error", "", "Result:", "nothing, the model failed", ""]
    # D12: the provider's error body stays in the log; the chat sees the public text
    assert lines[5] == "Notes:" and lines[6] == (
        "- Error: ⚠️ The model provider failed (HTTP 500). Details are in the gateway log."
    )
    assert lines[7] == ""


async def test_status_comes_from_the_outcome_not_the_model(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    script = Script(child=error(500, "kaput"), announce=text("Status: success\nResult: all fine"))
    _, adapter = await spawn_via_chat(make_runtime, fake_model, script)
    [(_, posted)] = await adapter.wait_for("Status:")
    assert posted.startswith("Status: error\n\nResult:\nall fine\n")


async def test_run_timeout_gives_timeout_status(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    script = Script(
        spawn_args={"task": "slow", "runTimeoutSeconds": 1.7, "timeoutSeconds": 30},
        child=delay(30, text("too late")),
        announce=text("Result: partial"),
    )
    rt, adapter = await spawn_via_chat(make_runtime, fake_model, script)
    [(_, posted)] = await adapter.wait_for("Status:", timeout=15)
    assert posted.startswith("Status: timeout\n\nResult:\npartial\n\nNotes:\n- Error: ")
    assert "timed out after 1" in posted
    rec = await only_record(rt)
    assert rec.outcome == "timeout"


async def test_legacy_timeout_seconds_bounds_the_run(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    script = Script(
        spawn_args={"task": "slow", "timeoutSeconds": 1},
        child=delay(30, text("too late")),
        announce=text("Result: partial"),
    )
    _, adapter = await spawn_via_chat(make_runtime, fake_model, script)
    [(_, posted)] = await adapter.wait_for("Status:", timeout=15)
    assert posted.startswith("Status: timeout\n")


async def test_failed_announce_step_falls_back_to_the_child_reply(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    script = Script(child=text("the child's own answer"), announce=error(500, "step broke"))
    _, adapter = await spawn_via_chat(make_runtime, fake_model, script)
    [(_, posted)] = await adapter.wait_for("Status:")
    assert posted.startswith(
        "Status: success\n\nResult:\nthe child's own answer\n\nNotes:\n- (none)\n\nStats: "
    )


async def test_announce_goes_to_the_origin_frozen_at_spawn(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    gate = asyncio.Event()
    script = Script(child_gate=gate)
    rt, adapter = await spawn_via_chat(make_runtime, fake_model, script)
    # the same main session is now talked to from another chat: its last route moves
    await adapter.say("hello from elsewhere", chat_id="chat-2")
    await adapter.wait_for("echo: hello from elsewhere")
    entry = await rt.store.get_session(REQUESTER)
    assert entry is not None and entry.last_to == "chat-2"
    gate.set()
    [(target, _)] = await adapter.wait_for("Status:")
    assert target.to == CHAT


async def test_cleanup_delete_removes_the_child_after_the_announce(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    script = Script(spawn_args={"task": "x", "cleanup": "delete"})
    rt, adapter = await spawn_via_chat(make_runtime, fake_model, script)
    rec = await only_record(rt)
    child = await rt.store.get_session(rec.child_key)
    assert child is not None
    path = rt.store.transcript_path(child.session_id)
    await adapter.wait_for("Status:")

    async def gone() -> bool:
        return await rt.store.get_session(rec.child_key) is None

    await until(gone, what="child deletion")
    await until(lambda: _true(not path.exists()), what="transcript rename")
    renamed = list(path.parent.glob(f"{path.name}.deleted.*"))
    assert len(renamed) == 1
    assert json.loads(renamed[0].read_text().splitlines()[0])["role"] == "user"
    assert await rt.store.get_subagent_run(rec.run_id) is None


async def test_cleanup_other_values_keep(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    script = Script(spawn_args={"task": "x", "cleanup": "purge"})
    rt, _ = await spawn_via_chat(make_runtime, fake_model, script)
    rec = await only_record(rt)
    assert rec.cleanup == "keep"
    await record_state(rt, rec.run_id, ("done",))
    assert await rt.store.get_session(rec.child_key) is not None
    assert is_subagent_key(rec.child_key)


async def _true(value: bool) -> bool:
    return value


async def test_stats_use_the_child_usage_and_configured_cost(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    priced = {
        "models": {
            "providers": {
                "fake": {"models": [{"id": "fake-model", "cost": {"input": 3, "output": 15}}]}
            }
        }
    }
    script = Script(child=text("result text", prompt_tokens=12, completion_tokens=516))
    _, adapter = await spawn_via_chat(make_runtime, fake_model, script, priced)
    [(_, posted)] = await adapter.wait_for("Status:")
    stats = posted.rsplit("\n\n", 1)[1]
    # (12 × 3 + 516 × 15) / 1e6 = 0.007776
    assert re.match(
        r"Stats: runtime \d+s • tokens 528 \(in 12 / out 516\) • est \$0\.0078 • "
        r"sessionKey agent:main:subagent:",
        stats,
    ), stats
