"""Layer 4, the engine: runs, the outbound gate, channels, the cluster (no SQL of its own) and
observability. Imports only model, config and store."""
