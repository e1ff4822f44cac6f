"""The gateway process's heap once the model stack is imported (D50).

After start-up almost every object alive (modules, classes, pydantic schemas, the model stack:
~235,000 objects) lives as long as the process, yet each full collection walked all of them:
~140 ms each, about once every hundred turns, 1.2 ms of CPU per turn on average. Frozen, the
collector sees only what turns allocate; a larger young generation then collects less often.

Only the `crosstalk gateway` process opts in (`core.edge.cli.main`): in a process that builds many
runtimes (the tests), frozen objects that later become cyclic garbage would never be freed.
"""

from __future__ import annotations

import gc
import logging
import sys

log = logging.getLogger(__name__)

YOUNG_THRESHOLD = 10_000
"""Allocations (minus frees) of tracked objects between young collections; CPython's 700
collected ~once a turn."""

_wanted = False


def skip_library_clis() -> None:
    """httpx imports its command-line client whenever click, rich and pygments happen to be
    installed (they are, for other tools), and pydantic-ai imports httpx with the model stack:
    ~6 MiB resident and 83 modules the gateway never runs (D145). Marked absent before
    anything imports httpx, its `main` is httpx's own stub."""
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]


def freeze_after_warm_up() -> None:
    """Called by the process that owns its heap (the gateway) before it starts."""
    global _wanted
    _wanted = True


def settle() -> bool:
    """Collect once, freeze what is alive, widen the young generation; once, and only when
    the process asked for it (`freeze_after_warm_up`). True when it did."""
    global _wanted
    if not _wanted:
        return False
    _wanted = False
    gc.freeze()  # no full collection first: it took ~140 ms, on the first turn's path (D54)
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, older, oldest)
    log.debug("heap settled: %d objects frozen", gc.get_freeze_count())
    return True
