"""The session tools over MCP: the official `mcp` SDK client against `/mcp` on the gateway
(bearer token, requester from the header, send policy enforced) and against `crosstalk mcp`
over stdio, which relays to a running gateway."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from aiohttp.test_utils import TestClient, TestServer
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from core.edge.http.server import build_app, start_gateway
from core.runtime import Runtime
from tests.conftest import ConfigFactory, RuntimeFactory
from tests.fakes.mcp_server import REPO_ROOT
from tests.fakes.model import FakeModelServer

EXTRA = {
    "session": {"agentToAgent": {"maxPingPongTurns": 0}},
    "agents": {
        "list": [
            {"id": "main", "default": True},
            {"id": "helper", "tools": {"deny": ["sessions_send"]}},
        ]
    },
}
ALL_TOOLS = [
    "sessions_list",
    "sessions_history",
    "sessions_search",
    "session_status",
    "sessions_send",
    "sessions_spawn",
    "agents_list",
    "subagents",
    "sessions_yield",
]


@pytest.fixture
async def gateway(make_runtime: RuntimeFactory) -> AsyncIterator[tuple[str, Runtime]]:
    rt = await make_runtime(EXTRA)
    async with TestClient(TestServer(build_app(rt, "test-token", []))) as c:
        yield str(c.make_url("/mcp")), rt


def _client(url: str, token: str = "test-token", session: str | None = None) -> Client:
    headers = {"Authorization": f"Bearer {token}"}
    if session is not None:
        headers["x-crosstalk-session-key"] = session
    return Client(
        # httpx's own 5 s default is shorter than a first turn's cold start on a loaded machine
        streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers, timeout=30)),
        read_timeout_seconds=30,
    )


def _details(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    return dict(result.structured_content)


async def test_tools_list_and_call_over_http(
    gateway: tuple[str, Runtime], fake_model: FakeModelServer
) -> None:
    url, rt = gateway
    await rt.services.ensure_session("agent:main:ops")
    async with _client(url) as mcp:
        tools = (await mcp.list_tools()).tools
        assert sorted(t.name for t in tools) == sorted(ALL_TOOLS)
        assert all(t.input_schema.get("type") == "object" for t in tools)
        listed = _details(await mcp.call_tool("sessions_list", {}))
        assert "agent:main:ops" in [r["key"] for r in listed["sessions"]]
        sent = _details(
            await mcp.call_tool(
                "sessions_send",
                {"sessionKey": "agent:main:ops", "message": "ping", "timeoutSeconds": 30},
            )
        )
        assert (sent["status"], sent["reply"]) == ("ok", "echo: ping")
        history = _details(
            await mcp.call_tool("sessions_history", {"sessionKey": "agent:main:ops"})
        )
        assert [m["role"] for m in history["messages"]][:2] == ["user", "assistant"]
        bad = await mcp.call_tool("sessions_send", {"message": "no target"})
        assert "status" in bad.structured_content and bad.structured_content["status"] == "error"


async def test_send_policy_and_identity_apply(
    gateway: tuple[str, Runtime], fake_model: FakeModelServer
) -> None:
    url, rt = gateway
    await rt.services.ensure_session("agent:main:quiet")
    await rt.store.update_session("agent:main:quiet", send_policy="deny")
    async with _client(url) as mcp:
        out = _details(
            await mcp.call_tool(
                "sessions_send",
                {"sessionKey": "agent:main:quiet", "message": "hi", "timeoutSeconds": 5},
            )
        )
        assert (out["status"], out["error"]) == ("error", "send blocked by session policy")
    assert fake_model.requests == []
    async with _client(url, session="agent:helper:desk") as helper:
        names = [t.name for t in (await helper.list_tools()).tools]
        assert "sessions_send" not in names and "sessions_list" in names
        refused = await helper.call_tool("sessions_send", {"sessionKey": "main", "message": "x"})
        assert refused.is_error and "Tool not available: sessions_send" in str(refused.content)


async def test_bad_token_is_refused(gateway: tuple[str, Runtime]) -> None:
    url, _ = gateway
    async with httpx2.AsyncClient() as http:
        resp = await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert resp.status_code == 401
    with pytest.raises(Exception):  # noqa: B017 - the SDK surfaces the 401 as its own error
        async with _client(url, token="wrong") as mcp:
            await mcp.list_tools()


async def test_stdio_command_relays_to_the_gateway(
    make_config: ConfigFactory, tmp_path: Path, fake_model: FakeModelServer
) -> None:
    gw = await start_gateway(make_config(EXTRA), port=0)
    try:
        await gw.runtime.services.ensure_session("agent:main:ops")
        config = tmp_path / "client.yaml"
        config.write_text(f"gateway:\n  stateDir: {tmp_path / 'client-state'}\n", encoding="utf-8")
        params = StdioServerParameters(
            command=sys.executable,
            args=[
                "-m",
                "core.edge.cli.main",
                "--config",
                str(config),
                "mcp",
                "--url",
                gw.url.rstrip("/"),
                "--token",
                gw.token,
                "--session",
                "agent:main:main",
            ],
            env={"PYTHONPATH": REPO_ROOT, "NO_PROXY": os.environ.get("NO_PROXY", "")},
            cwd=REPO_ROOT,
        )
        async with Client(params, read_timeout_seconds=30) as mcp:
            assert sorted(t.name for t in (await mcp.list_tools()).tools) == sorted(ALL_TOOLS)
            sent = _details(
                await mcp.call_tool(
                    "sessions_send",
                    {"sessionKey": "agent:main:ops", "message": "via stdio", "timeoutSeconds": 30},
                )
            )
            assert sent["reply"] == "echo: via stdio"
    finally:
        await gw.stop()


async def test_stdio_command_outlives_a_gateway_restart(
    make_config: ConfigFactory, tmp_path: Path, fake_model: FakeModelServer
) -> None:
    """D186: while the gateway is down a call is a failed tool call at once, and the next call
    after the restart works. The relay held one SDK session upstream: the call hung until the
    host's timeout, then the command ended, so the host lost the server until relaunched."""
    from tests.gateway_process import free_port

    port = free_port()
    gw = await start_gateway(make_config(EXTRA), port=port)
    config = tmp_path / "client.yaml"
    config.write_text(f"gateway:\n  stateDir: {tmp_path / 'client-state'}\n", encoding="utf-8")
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            *("-m", "core.edge.cli.main", "--config", str(config), "mcp"),
            *("--url", gw.url.rstrip("/"), "--token", gw.token),
        ],
        env={"PYTHONPATH": REPO_ROOT, "NO_PROXY": os.environ.get("NO_PROXY", "")},
        cwd=REPO_ROOT,
    )
    try:
        async with Client(params, read_timeout_seconds=30) as mcp:
            assert not (await mcp.call_tool("sessions_list", {})).is_error
            await gw.stop()
            down = await mcp.call_tool("sessions_list", {})
            assert down.is_error and "cannot reach the gateway" in str(down.content)
            gw = await start_gateway(make_config(EXTRA), port=port)
            assert _details(await mcp.call_tool("sessions_list", {}))["count"] >= 1
            assert sorted(t.name for t in (await mcp.list_tools()).tools) == sorted(ALL_TOOLS)
            refused = await mcp.call_tool("nope", {})
            assert refused.is_error and "Tool not available: nope" in str(refused.content)
    finally:
        await gw.stop()


async def test_stdio_command_without_a_gateway_says_so(tmp_path: Path) -> None:
    import asyncio

    config = tmp_path / "client.yaml"
    config.write_text(f"gateway:\n  stateDir: {tmp_path / 'state'}\n", encoding="utf-8")
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "core.edge.cli.main",
        "--config",
        str(config),
        "mcp",
        "--url",
        "http://127.0.0.1:9",
        "--token",
        "t",
        cwd=REPO_ROOT,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 1 and out == b""
    # D130: the gateway is checked before relaying starts, so one line says what and how
    assert err.decode().startswith("crosstalk: cannot reach the gateway at http://127.0.0.1:9")
    assert "--url" in err.decode() and "Traceback" not in err.decode()


async def test_without_the_session_tools_plugin_nothing_is_served(
    make_runtime: RuntimeFactory,
) -> None:
    """Core names the session tools only through the tool registry (D48): with their plugin
    disabled, `/mcp` lists no tool and `/tools/invoke` says the tool is unknown."""
    rt = await make_runtime({"plugins": {"disabled": ["session-tools"]}})
    assert "sessions_list" not in rt.tools.names
    async with TestClient(TestServer(build_app(rt, "test-token", []))) as c:
        async with _client(str(c.make_url("/mcp"))) as mcp:
            assert (await mcp.list_tools()).tools == []
        resp = await c.post(
            "/tools/invoke",
            json={"tool": "sessions_list", "args": {}},
            headers={"Authorization": "Bearer test-token"},
        )
        assert resp.status == 404, await resp.text()
