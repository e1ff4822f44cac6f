"""`sessions_send` limits (D8): the per-session rate and the hop budget that stops a loop."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tests.conftest import RuntimeFactory
from tests.fakes.model import (
    FakeModelServer,
    RequestJSON,
    last_message,
    system_text,
    text,
    tool_call,
    tool_results,
)
from tests.plugins.session_tools.send_helpers import (
    MAIN,
    NO_A2A,
    TARGET,
    a2a_done,
    is_announce,
    runs_in,
    send,
    session_of,
)

# ---- decision D8 -----------------------------------------------------------------------------


async def test_seventh_send_in_a_minute_is_rate_limited(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await make_runtime(NO_A2A)
    for i in range(6):
        out = await send(rt, {"sessionKey": TARGET, "message": f"m{i}", "timeoutSeconds": 0})
        assert out["status"] == "accepted"
    out = await send(rt, {"sessionKey": TARGET, "message": "m6", "timeoutSeconds": 0})
    assert out["status"] == "error" and out["error"].startswith("rate limited: ")
    assert out["sessionKey"] == TARGET
    await a2a_done(rt)
    inputs = [m.plain_text() for m in await runs_in(rt, TARGET)]
    assert [t for t in inputs if t.startswith("m")] == [f"m{i}" for i in range(6)]
    # Another source session has its own budget.
    out = await send(
        rt, {"sessionKey": TARGET, "message": "from main", "timeoutSeconds": 0}, key=MAIN
    )
    assert out["status"] == "accepted"
    await a2a_done(rt)


async def test_hop_budget_stops_a_three_agent_loop(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await make_runtime(
        {
            "agents": {"list": [{"id": "a"}, {"id": "b"}, {"id": "c"}]},
            "tools": {"agentToAgent": {"enabled": True}, "sessions": {"hopBudget": 3}},
            **NO_A2A,
        }
    )
    nxt = {
        "agent:a:main": "agent:b:main",
        "agent:b:main": "agent:c:main",
        "agent:c:main": "agent:a:main",
    }

    def responder(req: RequestJSON) -> Any:
        if is_announce(req):
            return text("ANNOUNCE_SKIP")
        if last_message(req).get("role") == "tool":
            return text("relayed")
        return tool_call(
            "sessions_send",
            {"sessionKey": nxt[session_of(req)], "message": "pass it on", "timeoutSeconds": 0},
        )

    fake_model.set_responder(responder)
    out = await send(
        rt,
        {"sessionKey": "agent:b:main", "message": "start", "timeoutSeconds": 0},
        key="agent:a:main",
    )
    assert out["status"] == "accepted"

    def refused() -> list[dict[str, Any]]:
        found = []
        for req in fake_model.requests:
            for res in tool_results(req):
                payload = json.loads(res["content"])
                if payload.get("status") == "error":
                    found.append(payload)
        return found

    async with asyncio.timeout(20):
        while not refused():
            await fake_model.wait_for_requests(len(fake_model.requests) + 1, timeout=20)
    assert refused()[0]["error"].startswith("hop budget exhausted")
    # Hops 1..3 ran (b, c, a); the fourth send was refused and started nothing.
    primaries = [
        session_of(r)
        for r in fake_model.requests
        if "Agent-to-agent message context:" in system_text(r)
        and last_message(r).get("role") == "user"
    ]
    assert primaries == ["agent:b:main", "agent:c:main", "agent:a:main"]
    await a2a_done(rt)
    assert [m.plain_text() for m in await runs_in(rt, "agent:b:main")] == [
        "start",
        "Agent-to-agent announce step.",
    ]
