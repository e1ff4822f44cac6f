"""Sub-agents: runs started by `sessions_spawn`, their registry, announces and archive."""
