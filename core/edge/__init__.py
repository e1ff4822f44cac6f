"""Layer 7, the edges: the HTTP API, the MCP server and the command line. They build or read
a runtime (core/runtime.py, layer 6) and use everything below."""
