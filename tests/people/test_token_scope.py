"""D60/D61: whoever holds the gateway token is an owner. `/tools/invoke` and the MCP server act
with the token, so they keep owner scope even when they name a guest's session as the
requester; the same tools called from that guest's own turn see only its session."""

from __future__ import annotations

from typing import Any

import httpx2
from aiohttp.test_utils import TestClient, TestServer
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from core.api.testing import RecordingAdapter
from core.edge.http.server import build_app
from tests.conftest import RuntimeFactory

TG = {"botToken": "1:x", "owners": ["10"], "allowFrom": ["20", "*"], "streaming": "off"}
GUEST = "agent:main:telegram:dm:30"
AUTH = {"Authorization": "Bearer test-token"}


async def test_the_token_keeps_owner_scope_over_http_and_mcp(
    make_runtime: RuntimeFactory,
) -> None:
    tg = RecordingAdapter("telegram")
    rt = await make_runtime(
        {"session": {"dmScope": "per-channel-peer"}, "channels": {"telegram": TG}}, adapters=[tg]
    )
    for sender, words in (("10", "my bank PIN is 9999"), ("20", "member"), ("30", "guest")):
        before = len(tg.sent)
        await tg.say(words, chat_id=sender, sender=sender)
        await tg.wait_for("", before + 1, timeout=15)
    owner_dm = "agent:main:telegram:dm:10"
    entry = await rt.store.get_session(GUEST)
    assert entry is not None
    as_guest = rt.services.context_for(entry, role="guest")
    out = await rt.tools.invoke(rt.tool_env, "sessions_list", {}, as_guest)
    assert {r["key"] for r in out["sessions"]} == {GUEST}  # the guest's own turn: itself

    async with TestClient(TestServer(build_app(rt, "test-token", []))) as c:

        async def invoke(tool: str, args: dict[str, Any]) -> dict[str, Any]:
            body = {"tool": tool, "args": args, "sessionKey": GUEST}
            resp = await c.post("/tools/invoke", json=body, headers=AUTH)
            assert resp.status == 200, await resp.text()
            return dict((await resp.json())["result"]["details"])

        listed = await invoke("sessions_list", {})
        assert {owner_dm, "agent:main:telegram:dm:20", GUEST} <= {
            r["key"] for r in listed["sessions"]
        }
        read = await invoke("sessions_history", {"sessionKey": owner_dm})
        assert "9999" in str(read["messages"])

        headers = {**AUTH, "x-crosstalk-session-key": GUEST}
        http = httpx2.AsyncClient(headers=headers, timeout=30)
        async with Client(
            streamable_http_client(str(c.make_url("/mcp")), http_client=http),
            read_timeout_seconds=30,
        ) as mcp:
            result = await mcp.call_tool("sessions_list", {})
            assert not result.is_error, result.content
            keys = {r["key"] for r in dict(result.structured_content or {})["sessions"]}
            assert {owner_dm, "agent:main:telegram:dm:20", GUEST} <= keys
            result = await mcp.call_tool("sessions_history", {"sessionKey": owner_dm})
            assert not result.is_error and "9999" in str(result.structured_content)
