"""D72, D120 across a kill -9: an approved call whose run is killed before the tool ran runs
once after the restart (the decision is a row; the resumed run is queued, not lost).

The gateway process pauses a risky MCP tool call in a web-chat turn; a second turn of the same
session holds the model, so the approved run waits queued behind it; the owner approves over
HTTP; the process is killed with SIGKILL before the tool ran. The next process aborts the
held turn (with its notice) and runs the approved one: the tool appends its line once.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from core.engine.outbound.restart_notice import restart_notice
from core.store import Store
from tests.e2e.gateway_chat import Chat
from tests.fakes.mcp_server import REPO_ROOT
from tests.fakes.model import FakeModelServer, RequestJSON, last_user_text, text, tool_call
from tests.gateway_process import GatewayProcess, write_config
from tests.polling import eventually


class Script:
    """`write it` calls the risky tool; any other message holds the model; a request that
    carries the tool's result is answered with it."""

    def __init__(self, notes: Path) -> None:
        self.notes = notes
        self.reached = asyncio.Event()
        self.release = asyncio.Event()

    async def __call__(self, body: RequestJSON) -> Any:
        results = [m for m in body.get("messages", []) if m.get("role") == "tool"]
        if results:
            return text(f"written: {results[-1]['content']}")
        if last_user_text(body) == "write it":
            return tool_call("calc__note", {"path": str(self.notes), "line": "ran"})
        self.reached.set()
        await self.release.wait()
        return text("too late")


def _config(tmp: Path, model: FakeModelServer) -> Path:
    extra = (
        "tools:\n  approvals:\n    require: ['mcp:calc']\n"
        "mcp:\n  servers:\n    calc:\n"
        f"      command: {sys.executable}\n      args: ['-m', 'tests.fakes.mcp_server']\n"
        f"      env: {{PYTHONPATH: {REPO_ROOT}}}\n      timeoutSeconds: 15\n"
    )
    return write_config(tmp / "crosstalk.yaml", tmp / "state", model, extra)


@pytest.mark.timeout(240)
async def test_an_approved_call_killed_before_it_ran_runs_once_after_restart(
    tmp_path: Path, fake_model: FakeModelServer
) -> None:
    notes = tmp_path / "notes.txt"
    script = Script(notes)
    fake_model.set_responder(script)
    config = _config(tmp_path, fake_model)
    store = Store(f"sqlite+aiosqlite:///{tmp_path / 'state'}/crosstalk.db", tmp_path)
    first = GatewayProcess(config)
    await first.__aenter__()
    try:
        async with Chat(first) as chat:
            await chat.send("write it")
            await chat.wait_for(lambda f: "Approval needed: calc__note" in str(f.get("text")))

            async def pending() -> list[dict[str, Any]]:
                status, body = await first.request("GET", "/api/approvals")
                assert status == 200
                return list(body["approvals"])

            (approval,) = await eventually(pending, timeout=30, what="the approval row")
            await chat.send("hold the line")
            await asyncio.wait_for(script.reached.wait(), 30)  # the session's lane is busy
            status, _ = await first.request("POST", f"/api/approvals/{approval['id']}/approve")
            assert status == 200
            question = await store.question(approval["id"])
            assert question is not None and question.status == "approved"
            run = await store.get_run(question.run_id)
            assert run is not None and run.status == "queued"  # decided, waiting its turn
            assert not notes.exists()
    finally:
        await first.kill()
    try:
        async with GatewayProcess(config) as second, Chat(second) as chat:
            for said in ("written: noted ran", restart_notice("hold the line")):
                await chat.wait_for(
                    lambda f, said=said: f.get("type") == "message" and f.get("text") == said,
                    timeout=90,
                )

            async def ended() -> bool:
                run = await store.get_run(question.run_id)
                return run is not None and run.status == "ok"

            await eventually(ended, timeout=30, what="the resumed run ended ok")
            assert notes.read_text(encoding="utf-8") == "ran\n"  # once
            assert [t for t in chat.texts() if t.startswith("written:")] == ["written: noted ran"]
    finally:
        await store.close()
