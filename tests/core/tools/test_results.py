"""Typed tool results dump to the documented camelCase JSON, exactly as the dicts did (D33)."""

from __future__ import annotations

import json

from core.tools.registry import tool_result
from core.tools.results import (
    AgentRow,
    AgentsListResult,
    DeliveryTarget,
    SessionRow,
    SessionsSendResult,
    SessionsSpawnResult,
)


def test_fields_become_camel_case_in_declaration_order_without_nones() -> None:
    ok = SessionsSendResult(run_id="r1", status="ok", reply="hi", session_key="main",
                            delivery={"status": "pending", "mode": "announce"})
    assert json.dumps(ok.payload()) == (
        '{"runId": "r1", "status": "ok", "reply": "hi", "sessionKey": "main", '
        '"delivery": {"status": "pending", "mode": "announce"}}')
    timeout = SessionsSendResult(run_id="r2", status="timeout", session_key="main")
    assert list(timeout.payload()) == ["runId", "status", "sessionKey"]


def test_nested_models_drop_nones_but_raw_json_keeps_its_nulls() -> None:
    row = SessionRow(key="main", kind="main", channel="webchat", session_id="s",
                     transcript_path="/t/s.jsonl", cost_usd=0, total_tokens=0,
                     delivery_context=DeliveryTarget(channel="webchat"),
                     messages=[{"role": "user", "meta": None}])
    out = row.payload()
    assert out["costUsd"] == 0 and isinstance(out["costUsd"], int)  # 0 stays 0, not 0.0
    assert out["deliveryContext"] == {"channel": "webchat"}
    assert out["messages"] == [{"role": "user", "meta": None}]
    assert "label" not in out and "displayName" not in out


def test_the_agent_envelope_is_unchanged() -> None:
    result = AgentsListResult(requester="main", allow_any=False,
                              agents=[AgentRow(id="main", configured=True)])
    assert tool_result(result.payload())["details"] == {
        "requester": "main", "allowAny": False, "agents": [{"id": "main", "configured": True}]}
    spawn = SessionsSpawnResult(child_session_key="agent:main:subagent:x", run_id="r")
    assert spawn.payload() == {"status": "accepted", "childSessionKey": "agent:main:subagent:x",
                               "runId": "r"}
