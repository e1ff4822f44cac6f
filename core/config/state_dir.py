"""Where a gateway keeps its state, found the same way by every entry point (D130).

`./scripts/run` makes `.crosstalk` in the checkout; `crosstalk gateway` and every client command
run from that checkout (or below it) then find the same directory, its database and its token,
as git finds `.git`. Order: `CROSSTALK_STATE_DIR`, `gateway.stateDir`, the nearest `.crosstalk`
directory in the current directory or above it, else `~/.crosstalk`.
"""

from __future__ import annotations

import os
from pathlib import Path

STATE_DIR_NAME = ".crosstalk"
HOME_STATE_DIR = "~/" + STATE_DIR_NAME
TOKEN_FILE = "gateway-token"


def nearest_state_dir(start: Path | None = None) -> Path | None:
    """The nearest `.crosstalk` directory in `start` (the current directory) or above it."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / STATE_DIR_NAME
        if candidate.is_dir():
            return candidate
    return None


def default_state_dir() -> str:
    """`gateway.stateDir` when neither the file nor `CROSSTALK_STATE_DIR` names one (D130)."""
    found = nearest_state_dir()
    return str(found) if found is not None else os.path.expanduser(HOME_STATE_DIR)


def state_dir_origin(state_dir: Path) -> str:
    """Why this directory was chosen, in words a user can act on (client errors, D130)."""
    if os.environ.get("CROSSTALK_STATE_DIR", "").strip():
        return "from CROSSTALK_STATE_DIR"
    found = nearest_state_dir()
    if found is not None and found == state_dir.resolve():
        return "the nearest .crosstalk in or above the current directory"
    if state_dir == Path(os.path.expanduser(HOME_STATE_DIR)):
        return "the default: no .crosstalk in or above the current directory"
    return "gateway.stateDir in the config"
