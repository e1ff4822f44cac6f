"""Agents use the tools of the MCP servers in `mcp.servers`, through the official `mcp` SDK.

Each server has one long-lived connection, opened on the first turn that needs it and held by
a task of its own (the SDK's transports must be entered and left in one task). Every connect
and call is bounded by the server's `timeoutSeconds`; a server that hangs, dies or never
starts gives the model a tool error (or no tools), never a stuck run, and the next use
reconnects.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import re
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any

from core.config import CrosstalkConfig, secret_value
from core.features.mcp import MISSING_EXTRA, mcp_installed
from core.model.media import MediaItem, collect

if TYPE_CHECKING:
    from core.config.schema_mcp import McpServerConfig

log = logging.getLogger(__name__)

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def tool_name(server: str, tool: str) -> str:
    """The name the model sees: `<server>__<tool>`, within the 64 characters providers allow."""
    return _UNSAFE.sub("_", f"{server}__{tool}")[:64]


def tool_error(name: str, message: str) -> dict[str, Any]:
    return {"status": "error", "tool": name, "error": message}


def result_payload(name: str, result: Any) -> Any:
    """An MCP `CallToolResult` as the model sees it: the text, or a tool error. Its image and
    binary resource contents go with the turn's reply (D78), a line each naming them."""
    texts = [getattr(block, "text", None) for block in result.content or []]
    text = "\n".join(t for t in texts if isinstance(t, str))
    if getattr(result, "is_error", False):
        return tool_error(name, text or "the MCP tool failed")
    media = media_of(result.content or [])
    if media:
        attached = collect(media)
        marks = [f"{m.placeholder()}{' attached to the reply' if attached else ''}" for m in media]
        text = "\n".join(x for x in [text, *marks] if x)
    structured = getattr(result, "structured_content", None)
    return text if text or structured is None else structured


def media_of(blocks: list[Any]) -> list[MediaItem]:
    """The images and binary resources of an MCP result, as media items (D78)."""
    out: list[MediaItem] = []
    for n, block in enumerate(blocks, 1):
        kind = getattr(block, "type", None)
        source = getattr(block, "resource", None) if kind == "resource" else block
        blob = getattr(source, "data", None) if kind == "image" else getattr(source, "blob", None)
        if not isinstance(blob, str):
            continue
        try:
            data = base64.b64decode(blob, validate=True)
        except ValueError:
            continue
        mime = str(
            getattr(source, "mime_type", None)
            or getattr(source, "mimeType", None)
            or "application/octet-stream"
        )
        uri = str(getattr(source, "uri", "") or "")
        name = uri.rstrip("/").rsplit("/", 1)[-1] or f"{kind}-{n}{_extension(mime)}"
        out.append(MediaItem(data=data, mime=mime, name=name))
    return out


def _extension(mime: str) -> str:
    import mimetypes

    return mimetypes.guess_extension(mime) or ""


class McpConnection:
    def __init__(self, name: str, cfg: McpServerConfig) -> None:
        self.name, self.cfg = name, cfg
        self._client: Any = None
        self._task: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[list[Any]] | None = None
        self._stop = asyncio.Event()
        self._tools: list[Any] = []

    def _server(self, stack: AsyncExitStack) -> Any:
        if self.cfg.command is not None:
            from mcp.client.stdio import StdioServerParameters

            env = {k: secret_value(v) or "" for k, v in self.cfg.env.items()}
            return StdioServerParameters(
                command=self.cfg.command, args=self.cfg.args, env=env or None
            )
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        headers = {k: secret_value(v) or "" for k, v in self.cfg.headers.items()}
        http = httpx2.AsyncClient(headers=headers, timeout=self.cfg.timeout_seconds)
        stack.push_async_callback(http.aclose)
        assert self.cfg.url is not None
        return streamable_http_client(self.cfg.url, http_client=http)

    async def _hold(self, ready: asyncio.Future[list[Any]]) -> None:
        if not mcp_installed():
            ready.set_exception(ConnectionError(MISSING_EXTRA))
            return
        from mcp import Client

        try:
            async with AsyncExitStack() as stack:
                client = await stack.enter_async_context(
                    Client(self._server(stack), read_timeout_seconds=self.cfg.timeout_seconds)
                )
                listed = await client.list_tools()
                self._client = client
                ready.set_result(list(listed.tools))
                await self._stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(ConnectionError(f"{type(exc).__name__}: {exc}"))
            if not isinstance(exc, Exception | asyncio.CancelledError):
                raise
            log.info("MCP server %s disconnected: %s", self.name, exc)
        finally:
            self._client = None

    async def tools(self) -> list[Any]:
        """The server's tools, connecting first if needed (raises when it cannot connect)."""
        if self._task is None or self._task.done():
            self._stop = asyncio.Event()
            self._ready = asyncio.get_running_loop().create_future()
            self._task = asyncio.create_task(self._hold(self._ready), name=f"mcp:{self.name}")
        assert self._ready is not None
        try:
            return await asyncio.wait_for(asyncio.shield(self._ready), self.cfg.timeout_seconds)
        except TimeoutError:
            # the start goes on: a server slower to start than one turn's wait (npx, a cold
            # import) is ready for a later turn instead of being restarted on every turn
            raise ConnectionError(
                f"no answer within {self.cfg.timeout_seconds:g}s (still starting)"
            ) from None

    async def call(self, name: str, tool: str, args: dict[str, Any]) -> Any:
        try:
            await self.tools()
            client = self._client
            if client is None:
                raise ConnectionError("the server disconnected")
            async with asyncio.timeout(self.cfg.timeout_seconds):
                result = await client.call_tool(tool, args)
        except TimeoutError:
            await self.reset()
            return tool_error(
                name,
                f"MCP server {self.name!r} did not answer within {self.cfg.timeout_seconds:g}s",
            )
        except Exception as exc:
            await self.reset()
            return tool_error(name, f"MCP server {self.name!r} failed: {exc}")
        return result_payload(name, result)

    async def reset(self) -> None:
        """Drop the connection (the next use reconnects), waiting briefly for it to close."""
        task, self._task = self._task, None
        if task is None or task.done():
            return
        self._stop.set()
        done, _ = await asyncio.wait({task}, timeout=2)
        if not done:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


class McpClients:
    """Every configured MCP server, and the pydantic-ai tools an agent gets from them."""

    def __init__(self, config: CrosstalkConfig) -> None:
        self.config = config
        self._conns = {n: McpConnection(n, c) for n, c in config.mcp.servers.items()}
        if self._conns and not mcp_installed():
            log.warning("mcp.servers is configured but %s", MISSING_EXTRA)

    def servers_for(self, agent_id: str) -> list[str]:
        agent = self.config.agent(agent_id)
        allowed = agent.mcp if agent is not None and agent.mcp is not None else None
        return [n for n in self._conns if allowed is None or n in allowed]

    def _allowed(self, names: list[str], session_key: str, agent_id: str) -> set[str]:
        """Deny lists (global, agent, sub-agent) apply to MCP tools by their `<server>__<tool>`
        names; allow lists and profiles name built-in tools only, so they do not."""
        from core.features.tools.registry import filter_tools
        from core.model.keys import is_subagent_key

        deny = list(self.config.tools.deny)
        agent = self.config.agent(agent_id)
        if agent is not None:
            deny += agent.tools.deny
        if is_subagent_key(session_key):
            deny += self.config.tools.subagents.tools.deny
        return set(filter_tools(names, profile=None, allow=None, deny=deny))

    async def tools_for(self, agent_id: str, session_key: str = "") -> list[Any]:
        """pydantic-ai tools of the agent's servers; a server that cannot connect adds none."""
        names = self.servers_for(agent_id)
        if not names:
            return []
        listed = await asyncio.gather(
            *(self._conns[n].tools() for n in names), return_exceptions=True
        )
        out: list[Any] = []
        for server, tools in zip(names, listed, strict=True):
            if isinstance(tools, BaseException):
                log.warning("MCP server %s unavailable: %s", server, tools)
                continue
            out += [self._tool(self._conns[server], t) for t in tools]
        allowed = self._allowed([t.name for t in out], session_key, agent_id)
        return [t for t in out if t.name in allowed]

    @staticmethod
    def _tool(conn: McpConnection, spec: Any) -> Any:
        from pydantic_ai import Tool

        name = tool_name(conn.name, spec.name)

        async def call(**kwargs: Any) -> Any:
            return await conn.call(name, spec.name, kwargs)

        schema = dict(spec.input_schema or {"type": "object", "properties": {}})
        return Tool.from_schema(
            call,
            name=name,
            description=spec.description or spec.name,
            json_schema=schema,
            takes_ctx=False,
        )

    async def close(self) -> None:
        for conn in self._conns.values():
            await conn.reset()
