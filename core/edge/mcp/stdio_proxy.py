"""`crosstalk mcp`: the gateway's MCP server over stdio, for MCP hosts that launch a command.

It relays to the running gateway's `/mcp` (token and requester session as for the other
client commands), so there is one runtime and one set of identity and policy checks.
"""

from __future__ import annotations

import sys
from typing import Any

from core.edge.mcp.server import SESSION_HEADER
from core.features.mcp import MISSING_EXTRA, mcp_installed


async def run_stdio_proxy(url: str, token: str, session: str) -> int:
    if not mcp_installed():
        print(f"crosstalk mcp: {MISSING_EXTRA}", file=sys.stderr)
        return 1
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.server import Server
    from mcp.server.stdio import stdio_server

    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {token}", SESSION_HEADER: session},
        timeout=httpx2.Timeout(30.0, read=None),
    )
    try:
        async with http, Client(streamable_http_client(f"{url}/mcp", http_client=http)) as upstream:

            async def list_tools(_ctx: Any, params: Any) -> Any:
                return await upstream.list_tools()

            async def call_tool(_ctx: Any, params: Any) -> Any:
                return await upstream.call_tool(params.name, dict(params.arguments or {}))

            server: Any = Server(
                "crosstalk", version="0.1.0", on_list_tools=list_tools, on_call_tool=call_tool
            )
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())
    except Exception as exc:
        print(
            f"crosstalk mcp: cannot serve the gateway at {url}: {type(exc).__name__}: {exc}",
            file=sys.stderr,
        )
        return 1
    return 0
