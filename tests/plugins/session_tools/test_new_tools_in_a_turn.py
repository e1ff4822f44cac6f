"""Today's session tools called by an agent in one real turn against the loopback fake model, on
SQLite and PostgreSQL (issue 22): the model finds a message with `sessions_search`, opens it
with `sessions_history {messageId}`, reads `session_status`, spawns a sub-agent, lists and
cancels it with `subagents`, and tells another session with `sessions_send` `notify` and
`steer`; every answer is the documented one, as the model receives it.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from core.engine.runs import RunRequest
from core.store import TranscriptMessage, now_ms
from tests.conftest import RuntimeFactory
from tests.core.features.subagents.helpers import is_announce_step, is_child
from tests.fakes.model import FakeModelServer, Reply, RequestJSON, text, tool_call
from tests.fakes.model_script import last_user_text, tool_results
from tests.polling import eventually

MAIN = "agent:main:main"
OPS = "agent:main:ops"
STEPS = (
    "sessions_search",
    "sessions_history",
    "session_status",
    "sessions_spawn",
    "subagents",  # list
    "subagents",  # cancel
    "sessions_send",  # notify
    "sessions_send",  # steer (the target is idle: a run)
)


class Agent:
    """The model of the main session: one tool per step, each built from the answers so far."""

    def __init__(self) -> None:
        self.answers: list[dict[str, Any]] = []
        self.child_gate = asyncio.Event()

    def args(self, step: int) -> dict[str, Any]:
        if step == 0:
            return {"query": "cafe launch"}
        if step == 1:
            hit = self.answers[0]["results"][0]
            return {"sessionKey": hit["sessionKey"], "messageId": hit["messageId"], "limit": 3}
        if step == 2:
            return {}
        if step == 3:
            return {"task": "count the stars", "label": "stars"}
        if step == 4:
            return {"action": "list"}
        if step == 5:
            return {"action": "cancel", "runId": self.answers[3]["runId"]}
        if step == 6:
            return {"sessionKey": OPS, "message": "the launch moved", "mode": "notify"}
        return {"sessionKey": OPS, "message": "status?", "mode": "steer", "timeoutSeconds": 30}

    async def __call__(self, req: RequestJSON) -> Reply | None:
        if is_announce_step(req):
            return text("Result: stopped")
        if is_child(req):
            await self.child_gate.wait()  # runs until cancelled
            return text("never")
        if last_user_text(req) != "go":
            return None  # other sessions' turns: the fake's echo
        results = tool_results(req)
        self.answers = [json.loads(r["content"]) for r in results]
        step = len(results)
        if step < len(STEPS):
            return tool_call(STEPS[step], self.args(step))
        return text("done")


async def test_every_new_tool_in_one_agent_turn(
    start: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    agent = Agent()
    fake_model.set_responder(agent)
    rt = await start({"session": {"agentToAgent": {"maxPingPongTurns": 0}}})
    ops = await rt.services.ensure_session(OPS)
    ids = await rt.store.append_messages(
        ops,
        [
            TranscriptMessage.text("user", "before", now_ms()),
            TranscriptMessage.text("user", "meet at the café about the launch", now_ms()),
            TranscriptMessage.text("assistant", "after", now_ms()),
        ],
    )
    main = await rt.services.ensure_session(MAIN)
    ctx = rt.services.context_for(main)
    run = await rt.services.start_run(RunRequest(session_key=MAIN, message="go", context=ctx))
    outcome = await rt.runs.wait(run.id, 120)
    assert (outcome.status, outcome.reply) == ("ok", "done"), outcome
    found, window, status, spawned, listed, cancelled, notified, steered = agent.answers
    assert found["count"] == 1 and found["results"][0]["messageId"] == ids[1]  # café ≈ cafe
    assert found["results"][0]["excerpt"] == "meet at the café about the launch"
    assert [m["id"] for m in window["messages"]] == ids
    assert (status["sessionKey"], status["status"], status["kind"]) == ("main", "running", "main")
    assert status["subagents"] == {"running": 0, "total": 0}
    assert spawned["status"] == "accepted"
    assert [(r["runId"], r["label"]) for r in listed["subagents"]] == [(spawned["runId"], "stars")]
    assert cancelled == {"status": "ok", "runId": spawned["runId"]}
    assert notified == {"status": "ok", "mode": "notify"}
    assert (steered["status"], steered["reply"]) == ("ok", "echo: status?")  # idle: as `run`

    async def aborted() -> bool:
        rec = await rt.subagents.get(spawned["runId"])
        return rec is not None and rec.outcome == "aborted"

    await eventually(aborted, 30, "the cancelled child ends aborted")
