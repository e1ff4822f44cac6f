"""MCP both ways: agents use configured MCP servers' tools (`client`), and MCP clients use the
session tools of this gateway (`server`). The `mcp` SDK is imported only when used."""
