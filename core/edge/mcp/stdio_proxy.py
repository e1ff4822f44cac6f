"""`crosstalk mcp`: the gateway's MCP server over stdio, for MCP hosts that launch a command.

It relays to the running gateway's `/mcp` (token and requester session as for the other
client commands), so there is one runtime and one set of identity and policy checks.

Each host request is one JSON-RPC POST: `/mcp` is stateless (every POST is answered in full),
so the relay holds no upstream session that a gateway restart could break. A gateway that is
down, restarting or answering garbage gives the host an error for that one request at once,
and the next request reaches the gateway again once it is back (D186); an upstream SDK
session hung each call until the host's own timeout and then ended the command for good.
"""

from __future__ import annotations

import itertools
import sys
from typing import Any

from core.edge.mcp.server import SESSION_HEADER
from core.features.mcp import MISSING_EXTRA, mcp_installed

INTERNAL_ERROR = -32603


class Upstream:
    """JSON-RPC requests to the gateway's `/mcp`, one POST each."""

    def __init__(self, http: Any, url: str) -> None:
        self.http = http
        self.url = url
        self._ids = itertools.count(1)

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The request's `result`; raises `MCPError` with what went wrong otherwise."""
        import httpx2
        from mcp.shared.exceptions import MCPError

        body = {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params}
        try:
            resp = await self.http.post(self.url, json=body)
            answer = resp.json()
        except (httpx2.HTTPError, ValueError) as exc:
            reason = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            raise MCPError(
                INTERNAL_ERROR, f"crosstalk mcp: cannot reach the gateway at {self.url}: {reason}"
            ) from None
        if not isinstance(answer, dict):
            answer = {}
        error = answer.get("error")
        if resp.status_code >= 400 or not isinstance(answer.get("result"), dict):
            message = (
                error.get("message") if isinstance(error, dict) else None
            ) or f"HTTP {resp.status_code}"
            code = error.get("code") if isinstance(error, dict) else None
            raise MCPError(
                code if isinstance(code, int) else INTERNAL_ERROR,
                f"crosstalk mcp: the gateway refused {method}: {message}",
            )
        result: dict[str, Any] = answer["result"]
        return result


async def run_stdio_proxy(url: str, token: str, session: str) -> int:
    if not mcp_installed():
        print(f"crosstalk mcp: {MISSING_EXTRA}", file=sys.stderr)
        return 1
    import httpx2
    import mcp_types as types
    from mcp.server import Server
    from mcp.server.stdio import stdio_server
    from mcp.shared.exceptions import MCPError

    http = httpx2.AsyncClient(
        headers={
            "Authorization": f"Bearer {token}",
            SESSION_HEADER: session,
            "Accept": "application/json, text/event-stream",
        },
        timeout=httpx2.Timeout(30.0, read=None),
    )
    upstream = Upstream(http, f"{url}/mcp")

    async def list_tools(_ctx: Any, params: Any) -> Any:
        return types.ListToolsResult.model_validate(await upstream.request("tools/list", {}))

    async def call_tool(_ctx: Any, params: Any) -> Any:
        try:
            result = await upstream.request(
                "tools/call", {"name": params.name, "arguments": dict(params.arguments or {})}
            )
        except MCPError as exc:  # the host shows a failed call, and may try again
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=exc.error.message)], is_error=True
            )
        return types.CallToolResult.model_validate(result)

    try:
        async with http:
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
