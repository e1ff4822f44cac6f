"""The public API: the only core modules `adapters/` and `plugins/` import (D91; D37, D38, D24).

- `core.api.channels`: what a channel package builds on (adapter protocol, spec, supervisor,
  config bases, values, delivery errors).
- `core.api.rendering`: format-aware chunking and markdown helpers for renderers.
- `core.api.gateway`: what a channel serving the gateway's own pages (the web chat) reads.
- `core.api.sessions`: keys, records, delivery targets, runs, send policy.
- `core.api.plugins`: what a plugin registers and its handlers receive.
- `core.api.testing`: test doubles for plugin and channel authors.

The top floor of core (D90): it may re-export anything below, and nothing in core imports it.
"""
