"""Agents use MCP servers' tools: stdio and streamable HTTP fakes built with the official SDK,
the per-agent allowlist, stored tool calls, and servers that fail, hang, die or never start."""

from __future__ import annotations

from typing import Any

from core.engine.runs import RunRequest
from core.engine.runs.contract import RunOutcome
from core.runtime import Runtime
from tests.conftest import RuntimeFactory
from tests.fakes.mcp_server import REPO_ROOT, STDIO_COMMAND, STDIO_SERVER, serving_http
from tests.fakes.model import FakeModelServer, text, tool_call, tool_names, tool_results
from tests.polling import eventually

STDIO = STDIO_SERVER


async def _turn(rt: Runtime, message: str, key: str = "agent:main:main") -> RunOutcome:
    entry = await rt.services.ensure_session(key)
    run = await rt.services.start_run(
        RunRequest(session_key=key, message=message, context=rt.services.context_for(entry))
    )
    return await rt.runs.wait(run.id, 60)


def _result(fake: FakeModelServer, index: int) -> str:
    return str(tool_results(fake.requests[index])[-1]["content"])


async def test_stdio_tools_reach_the_model_and_are_stored(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await make_runtime({"mcp": {"servers": {"calc": STDIO}}, "tools": {"deny": ["calc__die"]}})
    fake_model.script(
        tool_call("calc__add", {"a": 2, "b": 3}),
        text("five"),
        tool_call("calc__fail", {"message": "nope"}),
        text("it failed"),
    )
    assert (await _turn(rt, "add them")).reply == "five"
    offered = set(tool_names(fake_model.requests[0]))
    assert {"calc__add", "calc__echo", "sessions_list"} <= offered
    assert "calc__die" not in offered  # tools.deny applies to MCP tools by name
    assert "sum=5" in _result(fake_model, 1)
    assert (await _turn(rt, "fail")).reply == "it failed"
    assert "nope" in _result(fake_model, 3) and "error" in _result(fake_model, 3)
    entry = await rt.store.get_session("agent:main:main")
    assert entry is not None
    stored = [m for m in await rt.store.history(entry.session_id) if m.role == "toolResult"]
    assert [m.tool_name for m in stored] == ["calc__add", "calc__fail"]
    assert "sum=5" in stored[0].plain_text()


async def test_http_server_with_headers_and_allowlist(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    async with serving_http(token="s3cret") as url:
        rt = await make_runtime(
            {
                "mcp": {
                    "servers": {"web": {"url": url, "headers": {"Authorization": "Bearer s3cret"}}}
                },
                "agents": {"list": [{"id": "main", "default": True}, {"id": "plain", "mcp": []}]},
            }
        )
        fake_model.script(tool_call("web__echo", {"text": "hi"}), text("ok"))
        assert (await _turn(rt, "echo")).reply == "ok"
        assert "mcp echo: hi" in _result(fake_model, 1)
        await _turn(rt, "no tools here", key="agent:plain:main")
        assert not [n for n in tool_names(fake_model.requests[-1]) if n.startswith("web__")]
        await rt.stop()


async def _listed(rt: Runtime, timeout: float = 60) -> list[Any]:
    """Wait (with a deadline) until the agent's MCP servers have started and listed tools."""

    async def tools() -> list[Any]:
        return await rt.mcp.tools_for("main")

    return await eventually(tools, timeout, "MCP tools listed")


async def test_a_server_slower_to_start_than_its_timeout_is_used_once_started(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    """A first turn that cannot wait for the start goes on without the tools; the start is not
    thrown away, so a later turn has them (it used to restart the server on every turn)."""
    slow = {
        "command": "sh",
        "args": ["-c", 'sleep 2; exec "$0" "$@"', *STDIO_COMMAND],
        "env": {"PYTHONPATH": REPO_ROOT},
        "timeoutSeconds": 1,
    }
    rt = await make_runtime({"mcp": {"servers": {"calc": slow}}})
    assert (await _turn(rt, "hello")).reply == "echo: hello"
    assert not [n for n in tool_names(fake_model.requests[0]) if n.startswith("calc__")]
    assert "calc__add" in {t.name for t in await _listed(rt)}


async def test_hang_and_death_give_tool_errors_then_reconnect(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await make_runtime({"mcp": {"servers": {"calc": {**STDIO, "timeoutSeconds": 5}}}})
    await _listed(rt)  # started before the first turn, however slow the machine
    fake_model.script(tool_call("calc__hang", {"seconds": 60}), text("gave up"))
    outcome = await _turn(rt, "hang")
    assert (outcome.status, outcome.reply) == ("ok", "gave up")
    assert "did not answer within 5s" in _result(fake_model, 1)
    fake_model.script(
        tool_call("calc__die", {}),
        text("it died"),
        tool_call("calc__add", {"a": 1, "b": 1}),
        text("back"),
    )
    assert (await _turn(rt, "die")).reply == "it died"
    assert "failed" in _result(fake_model, 3)
    assert (await _turn(rt, "again")).reply == "back"  # a fresh process answers
    assert "sum=2" in _result(fake_model, 5)


async def test_server_that_never_starts_leaves_the_turn_working(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    broken: dict[str, Any] = {"command": "/nonexistent/mcp-server", "timeoutSeconds": 5}
    rt = await make_runtime({"mcp": {"servers": {"gone": broken}}})
    outcome = await _turn(rt, "hello")
    assert (outcome.status, outcome.reply) == ("ok", "echo: hello")
    assert not [n for n in tool_names(fake_model.requests[0]) if n.startswith("gone__")]
