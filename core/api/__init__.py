"""The public API: the only core modules `adapters/` and `plugins/` import (D37, D38, D24).

`core.api.channels` for channel packages, `core.api.plugins` for plugins, `core.api.testing`
for test doubles."""
