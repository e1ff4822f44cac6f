"""The session tools' typed results dump to the documented camelCase JSON, as dicts did (D33)."""

from __future__ import annotations

import json

from core.features.tools.registry import tool_result
from plugins.session_tools.results import (
    AgentRow,
    AgentsListResult,
    SessionsSendResult,
    SessionsSpawnResult,
)


def test_fields_become_camel_case_in_declaration_order_without_nones() -> None:
    ok = SessionsSendResult(
        run_id="r1",
        status="ok",
        reply="hi",
        session_key="main",
        delivery={"status": "pending", "mode": "announce"},
    )
    assert json.dumps(ok.payload()) == (
        '{"runId": "r1", "status": "ok", "reply": "hi", "sessionKey": "main", '
        '"delivery": {"status": "pending", "mode": "announce"}}'
    )
    timeout = SessionsSendResult(run_id="r2", status="timeout", session_key="main")
    assert list(timeout.payload()) == ["runId", "status", "sessionKey"]


def test_the_agent_envelope_is_unchanged() -> None:
    result = AgentsListResult(
        requester="main", allow_any=False, agents=[AgentRow(id="main", configured=True)]
    )
    assert tool_result(result.payload())["details"] == {
        "requester": "main",
        "allowAny": False,
        "agents": [{"id": "main", "configured": True}],
    }
    spawn = SessionsSpawnResult(child_session_key="agent:main:subagent:x", run_id="r")
    assert spawn.payload() == {
        "status": "accepted",
        "childSessionKey": "agent:main:subagent:x",
        "runId": "r",
    }
