"""`subagents` (D68) on SQLite and PostgreSQL: list and cancel within the caller's tree only; a
cancelled child ends `aborted` and its announce says why."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from typing import Any

from core.model.tool_context import ToolContext
from core.runtime import Runtime
from tests.conftest import RuntimeFactory
from tests.fakes.model import FakeModelServer, RequestJSON, system_text, text
from tests.polling import eventually

MAIN = "agent:main:main"


async def ctx_for(rt: Runtime, key: str = MAIN, role: str = "owner") -> ToolContext:
    entry = await rt.services.ensure_session(key)
    return replace(rt.services.context_for(entry), role=role)  # type: ignore[arg-type]


async def call(rt: Runtime, ctx: ToolContext, tool: str, **args: Any) -> dict[str, Any]:
    return await rt.tools.invoke(rt.tool_env, tool, args, ctx)


async def test_list_and_cancel_within_the_tree(
    start: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    gate = asyncio.Event()

    async def responder(req: RequestJSON) -> Any:
        if "# Subagent Context" in system_text(req):
            await gate.wait()
            return text("child done")
        return None

    fake_model.set_responder(responder)
    rt = await start()
    main = await ctx_for(rt)
    spawned = await call(rt, main, "sessions_spawn", task="count the stars", label="stars")
    assert spawned["status"] == "accepted", spawned
    run_id = spawned["runId"]
    await fake_model.wait_for_requests(1, timeout=30)  # the first turn imports the model stack
    listed = await call(rt, main, "subagents", action="list")
    assert listed["count"] == 1
    (row,) = listed["subagents"]
    assert set(row) == {
        "runId", "childSessionKey", "label", "task", "status", "startedAt", "endedAt",
    }  # fmt: skip
    assert (row["runId"], row["label"], row["task"], row["status"], row["endedAt"]) == (
        run_id,
        "stars",
        "count the stars",
        "running",
        None,
    )
    assert row["childSessionKey"] == spawned["childSessionKey"]

    stranger = await ctx_for(rt, "agent:main:dm:other")
    assert await call(rt, stranger, "subagents") == {"count": 0, "subagents": []}
    refused = await call(rt, stranger, "subagents", action="cancel", runId=run_id)
    missing = await call(rt, stranger, "subagents", action="cancel", runId="nope")
    assert refused == {"status": "error", "error": f"No sub-agent run found: {run_id}"}
    assert missing == {"status": "error", "error": "No sub-agent run found: nope"}

    assert await call(rt, main, "subagents", action="cancel", runId=run_id) == {
        "status": "ok",
        "runId": run_id,
    }

    async def ended() -> dict[str, Any] | None:
        (r,) = (await call(rt, main, "subagents"))["subagents"]
        return r if r["status"] == "aborted" and r["endedAt"] is not None else None

    await eventually(ended, what="the cancelled child ends aborted")
    rec = await rt.subagents.get(run_id)
    assert rec is not None and rec.error == "cancelled by the session that started it"

    async def announced() -> bool:
        return any(
            "cancelled by the session that started it" in json.dumps(r) for r in fake_model.requests
        )

    await eventually(announced, what="the announce says it was cancelled")
    gate.set()
