"""The MCP server edge: the session tools served at `/mcp` and by `crosstalk mcp`."""
