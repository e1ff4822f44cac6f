"""A fake MCP server built with the official `mcp` SDK, for the client side of MCP.

Run over stdio as a subprocess (``python -m tests.fakes.mcp_server``), or serve it over
streamable HTTP in the test's own event loop with :func:`serving_http` (which also demands a
bearer token, so configured ``headers`` are proven to reach the server).

Tools: ``add(a, b)``, ``echo(text)``, ``chart()`` (a PNG image), ``fail(message)`` (an MCP
tool error), ``note(path, line)`` (appends a line to a file), ``hang(seconds)`` and
``die()`` (the process exits mid-call, like a crashed server).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import sys
from collections.abc import AsyncIterator
from typing import Any

from mcp.server.mcpserver import Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

TINY_PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"
)
STDIO_COMMAND = [sys.executable, "-m", "tests.fakes.mcp_server"]
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STDIO_SERVER: dict[str, Any] = {
    "command": STDIO_COMMAND[0],
    "args": STDIO_COMMAND[1:],
    "env": {"PYTHONPATH": REPO_ROOT},
    "timeoutSeconds": 15,
}
"""This fake as an `mcp.servers.<name>` entry of a gateway's config."""


def build_server() -> MCPServer:
    server = MCPServer("fake-tools")

    @server.tool()
    def add(a: int, b: int) -> str:
        """Add two integers."""
        return f"sum={a + b}"

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text back."""
        return f"mcp echo: {text}"

    @server.tool(structured_output=False)
    def chart() -> list[Any]:
        """A tiny PNG image with a line of text (MCP image content, D78)."""
        return ["here is the chart", Image(data=TINY_PNG, format="png")]

    @server.tool()
    def fail(message: str) -> str:
        """Always fails with the message (an MCP tool error the client sees)."""
        raise ToolError(message)

    @server.tool()
    async def hang(seconds: float) -> str:
        """Sleep, then answer (used to test client timeouts)."""
        await asyncio.sleep(seconds)
        return "woke up"

    @server.tool()
    def note(path: str, line: str) -> str:
        """Append a line to a file: a side effect a test counts across processes."""
        with open(path, "a", encoding="utf-8") as f:
            f.write(line + "\n")
        return f"noted {line}"

    @server.tool()
    def die() -> str:
        """Exit the server process at once."""
        os._exit(3)

    return server


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.asynccontextmanager
async def serving_http(token: str = "mcp-secret") -> AsyncIterator[str]:
    """Serve the fake over streamable HTTP on loopback; yields the endpoint URL."""
    import uvicorn

    app = build_server().streamable_http_app()

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            if headers.get(b"authorization") != f"Bearer {token}".encode():
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [(b"content-type", b"text/plain")],
                    }
                )
                await send({"type": "http.response.body", "body": b"unauthorized"})
                return
        await app(scope, receive, send)

    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(guarded, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    )
    task = asyncio.create_task(server.serve())
    try:
        from tests.polling import eventually

        async def started() -> bool | None:
            return True if server.started else None

        await eventually(started, timeout=10)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.should_exit = True
        await asyncio.wait({task}, timeout=5)


if __name__ == "__main__":
    build_server().run("stdio")
