"""D72 across processes: two runtimes on one PostgreSQL database act as two gateway processes.

Requested on A, approved on B (B resumes the run); pressed on both at once, the tool runs once.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from core.api.testing import RecordingAdapter
from core.runtime import Runtime
from tests.conftest import RuntimeFactory
from tests.core.features.approvals.helpers import APPROVALS, add_danger_tool
from tests.fakes.model import FakeModelServer, text, tool_call
from tests.pg import fresh_pg_database

pytestmark = pytest.mark.postgres


async def _two(
    make_runtime: RuntimeFactory, tmp_path: Path, db: str
) -> tuple[Runtime, RecordingAdapter, Runtime, RecordingAdapter, list[str]]:
    ran: list[str] = []
    out: list[tuple[Runtime, RecordingAdapter]] = []
    for name in ("a", "b"):
        adapter = RecordingAdapter("telegram")
        rt = await make_runtime(
            {
                **APPROVALS,
                "channels": {"telegram": {"owners": ["owner-1"]}},
                "gateway": {"stateDir": str(tmp_path / name), "database": {"url": db}},
            },
            adapters=[adapter],
        )
        add_danger_tool(rt, ran)
        out.append((rt, adapter))
    (a, aa), (b, ba) = out
    return a, aa, b, ba, ran


@pytest.mark.parametrize("both", [False, True], ids=["on-b", "on-both-at-once"])
async def test_requested_on_a_approved_elsewhere_runs_once(
    make_runtime: RuntimeFactory,
    fake_model: FakeModelServer,
    tmp_path: Path,
    both: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # two runtimes in one OS process: neither may take the other for a dead process of this pid
    monkeypatch.setattr("core.engine.cluster.processes._pid_alive", lambda pid: True)
    async with fresh_pg_database() as db:
        a, a_chat, b, b_chat, ran = await _two(make_runtime, tmp_path, db)
        fake_model.script(tool_call("danger", {"target": "prod"}), text("deleted prod"))
        await a_chat.say("delete it", chat_id="chat-1", sender="owner-1")
        await a_chat.wait_for("🛡️ Approval needed", 1)
        (approval,) = await b.approvals.pending()  # B sees A's request in the shared store
        deciders = [b] + ([a] if both else [])
        results = await asyncio.gather(
            *(rt.approvals.decide(approval.id, "approved", by="owner-1") for rt in deciders)
        )
        assert sum(r.approval is not None for r in results) == 1
        winner = b_chat if results[0].approval is not None else a_chat
        await winner.wait_for("deleted prod", 1)
        assert ran == ["prod"]
        run = await b.store.get_run(approval.run_id)
        assert run is not None and run.status == "ok"
        assert run.owner == (b if winner is b_chat else a).membership.id
        await a.stop()
        await b.stop()
