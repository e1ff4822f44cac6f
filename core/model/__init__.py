"""Layer 1, pure values and rules: keys, inbound messages, delivery targets, permissions,
errors, send policy, chunking. Imports nothing from the layers above (docs/ARCHITECTURE.md)."""
