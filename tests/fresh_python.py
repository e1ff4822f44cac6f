"""A snippet run in a fresh Python process from the checkout's root: what a module imports, or
leaves unimported, shows only in a process that has imported nothing else yet."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_python(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`python -c code` at the checkout's root, `env` added to this process's environment;
    raises when it fails."""
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
    )
