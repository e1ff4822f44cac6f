"""Private files for the state directory (decision D12): directories 0700, files 0600.

Modes are given at creation (so no umask, not even 022, leaves a readable window) and tightened
on files an older version left behind. SQLite creates its -wal and -shm files with the mode of
the database file, so a database created 0600 keeps its WAL private too.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO

DIR_MODE = 0o700
FILE_MODE = 0o600


def private_dir(path: Path, *, tighten: bool = True) -> Path:
    """Create `path` (and missing parents) 0700; tighten it if it exists (and `tighten`)."""
    missing = []
    p = path
    while not p.exists() and p != p.parent:
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        d.mkdir(mode=DIR_MODE, exist_ok=True)
        os.chmod(d, DIR_MODE)
    if tighten:
        os.chmod(path, DIR_MODE)
    return path


def private_file(path: Path) -> Path:
    """Create `path` empty 0600 if missing; tighten it if it exists."""
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, FILE_MODE)
    os.close(fd)
    os.chmod(path, FILE_MODE)
    return path


def open_private(path: Path, mode: str = "a") -> IO[str]:
    """Open a text file for writing (`a` or `w`), created 0600."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if mode == "a" else os.O_TRUNC)
    return os.fdopen(os.open(path, flags, FILE_MODE), mode, encoding="utf-8")


def tighten_tree(root: Path) -> None:
    """Every directory under `root` 0700 and every file 0600 (state left by older versions)."""
    for dirpath, dirnames, filenames in os.walk(root):
        for d in dirnames:
            os.chmod(os.path.join(dirpath, d), DIR_MODE)
        for f in filenames:
            full = os.path.join(dirpath, f)
            if not os.path.islink(full):
                os.chmod(full, FILE_MODE)
