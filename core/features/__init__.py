"""Layer 5, features: the inbound pipeline, access, agent turns, tools, commands, sub-agents,
cron, the MCP client, plugin discovery. Imports only the layers below."""
