"""The built-in tools on their tool environment alone (D30): no runtime, no model server.

`ToolRegistry.invoke(env, …)` with a `ToolServices` wired from real parts (tests/narrow.py);
the agent at the other end of a send or spawn is the in-process echo executor.
"""

from __future__ import annotations

from pathlib import Path

from core.features.tools.results import SessionRow
from core.model.delivery_context import DeliveryContext
from core.model.tool_context import ToolContext
from tests.narrow import Parts, narrow_parts

MAIN = "agent:main:main"
GROUP = "agent:main:webchat:group:team"


def caller(key: str = MAIN, *, owner: bool = True) -> ToolContext:
    return ToolContext(
        session_key=key,
        agent_id="main",
        role="owner" if owner else "member",
        origin=DeliveryContext(channel="webchat", to="u1"),
    )


async def _sessions(p: Parts) -> None:
    await p.tool_env.ensure_session(MAIN)
    await p.tool_env.ensure_session(GROUP, display_name="team", channel="webchat")


async def test_sessions_list_and_history_read_the_store(tmp_path: Path) -> None:
    async with narrow_parts(tmp_path) as p:
        await _sessions(p)
        listed = await p.tools.invoke(p.tool_env, "sessions_list", {}, caller())
        assert listed["count"] == 2
        assert {row["key"] for row in listed["sessions"]} == {"main", GROUP}
        for row in listed["sessions"]:  # D33: rows are dicts in the shape of SessionRow
            assert SessionRow.model_validate(row).payload() == row
        with_messages = await p.tools.invoke(
            p.tool_env, "sessions_list", {"messageLimit": 2}, caller()
        )
        for row in with_messages["sessions"]:
            assert SessionRow.model_validate(row).payload() == row
        history = await p.tools.invoke(
            p.tool_env, "sessions_history", {"sessionKey": GROUP}, caller()
        )
        assert history["messages"] == []


async def test_sessions_send_waits_for_the_reply(tmp_path: Path) -> None:
    async with narrow_parts(tmp_path, {"session": {"agentToAgent": {"maxPingPongTurns": 0}}}) as p:
        await _sessions(p)
        out = await p.tools.invoke(
            p.tool_env,
            "sessions_send",
            {"sessionKey": GROUP, "message": "ping", "timeoutSeconds": 10},
            caller(),
        )
        assert (out["status"], out["reply"], out["sessionKey"]) == ("ok", "echo: ping", GROUP)
        assert list(out) == ["runId", "status", "reply", "sessionKey", "delivery"]
        assert p.executor.turns[0] == "ping"


async def test_a_refusal_is_the_documented_payload(tmp_path: Path) -> None:
    """A send past the hop budget is refused by the tool, returned (not raised) as a payload."""
    async with narrow_parts(tmp_path) as p:
        await _sessions(p)
        deep = ToolContext(session_key=MAIN, agent_id="main", hops=99, role="owner")
        out = await p.tools.invoke(
            p.tool_env, "sessions_send", {"sessionKey": GROUP, "message": "x"}, deep
        )
        assert out["status"] == "error" and "hop" in out["error"]
        assert p.executor.turns == []


async def test_sessions_spawn_starts_a_sub_agent(tmp_path: Path) -> None:
    async with narrow_parts(tmp_path) as p:
        await _sessions(p)
        out = await p.tools.invoke(p.tool_env, "sessions_spawn", {"task": "count to 3"}, caller())
        assert out["status"] == "accepted"
        assert out["childSessionKey"].startswith("agent:main:subagent:")
        assert (await p.runs.wait(out["runId"], 10)).status == "ok"
        [rec] = await p.tool_env.subagents.runs_of(MAIN)
        assert rec.child_key == out["childSessionKey"]


async def test_cron_tool_adds_lists_and_removes_a_job(tmp_path: Path) -> None:
    async with narrow_parts(tmp_path) as p:
        await _sessions(p)
        added = await p.tools.invoke(
            p.tool_env, "cron", {"action": "add", "every": "1h", "message": "stretch"}, caller()
        )
        assert added["status"] == "ok"
        job_id = added["job"]["id"]
        listed = await p.tools.invoke(p.tool_env, "cron", {"action": "list"}, caller())
        assert [j["id"] for j in listed["jobs"]] == [job_id]
        removed = await p.tools.invoke(
            p.tool_env, "cron", {"action": "remove", "id": job_id}, caller()
        )
        assert removed == {"status": "ok", "removed": job_id}


async def test_agents_list_names_the_default_agent(tmp_path: Path) -> None:
    async with narrow_parts(tmp_path) as p:
        out = await p.tools.invoke(p.tool_env, "agents_list", {}, caller())
        assert [a["id"] for a in out["agents"]] == ["main"]
