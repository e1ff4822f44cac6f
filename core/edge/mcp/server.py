"""The session tools over MCP, for Claude Desktop, Cursor or any MCP client.

Same identity rules as `POST /tools/invoke` (D9): the caller names its session (header
`x-crosstalk-session-key`, default main) and acts as that session; calls are not sandboxed;
the send policy and every other check inside the tools apply as usual. The model never
chooses who it is.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from core.features.tools.availability import tool_names_for
from core.features.tools.registry import tool_result
from core.model.errors import ToolError
from core.model.keys import agent_id_of

if TYPE_CHECKING:
    from core.runtime import Runtime

SESSION_HEADER = "x-crosstalk-session-key"

KeyOf = Callable[[Any], str]
"""The requester's raw session key for an MCP request context ("" = main)."""


def header_key(ctx: Any) -> str:
    request = getattr(ctx, "request", None)
    headers = getattr(request, "headers", None)
    return str(headers.get(SESSION_HEADER, "")).strip() if headers is not None else ""


def _text(message: str) -> Any:
    import mcp_types as types

    return types.TextContent(type="text", text=message)


def build_server(rt: Runtime, key_of: KeyOf = header_key) -> Any:
    """A low-level MCP `Server` whose tools are the session tools the requester may use."""
    import mcp_types as types
    from mcp.server import Server

    def requester(ctx: Any) -> str:
        raw = key_of(ctx)
        return rt.keys.main_session_key() if raw in ("", "main") else rt.keys.canonical(raw)

    def available(key: str) -> list[str]:
        names = tool_names_for(rt.config, rt.tools, key, agent_id_of(key))
        return [n for n in rt.tools.served_over_mcp() if n in names]

    async def list_tools(ctx: Any, _params: Any) -> Any:
        tools = []
        for name in available(requester(ctx)):
            spec = rt.tools.get(name)
            assert spec is not None
            tools.append(
                types.Tool(name=name, description=spec.description, input_schema=spec.json_schema())
            )
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: Any) -> Any:
        try:
            key = requester(ctx)
        except ValueError as exc:
            return types.CallToolResult(content=[_text(str(exc))], is_error=True)
        name = params.name
        if name not in available(key):
            return types.CallToolResult(
                content=[_text(f"Tool not available: {name}")], is_error=True
            )
        entry = await rt.services.ensure_session(key)
        tool_ctx = replace(rt.services.context_for(entry, via="http"), origin=None)
        try:
            payload = await rt.tools.invoke(
                rt.tool_env, name, dict(params.arguments or {}), tool_ctx
            )
        except ToolError as exc:
            return types.CallToolResult(content=[_text(str(exc))], is_error=True)
        result = tool_result(payload)
        return types.CallToolResult(
            content=[_text(result["content"][0]["text"])],
            structured_content=json.loads(json.dumps(result["details"], default=str)),
        )

    return Server(
        "crosstalk",
        version="0.1.0",
        instructions="Session tools of a Crosstalk gateway: list sessions, read "
        "their history, send messages, spawn sub-agents.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
