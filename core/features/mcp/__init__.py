"""MCP both ways: agents use configured MCP servers' tools (`client`), and MCP clients use the
session tools of this gateway (`server`). The `mcp` SDK is imported only when used."""

from importlib.util import find_spec

MISSING_EXTRA = "MCP needs the optional extra: pip install 'crosstalk[mcp]'"


def mcp_installed() -> bool:
    """Whether the `mcp` SDK is importable (checked without importing it)."""
    return find_spec("mcp") is not None
