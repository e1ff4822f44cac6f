"""The `crosstalk` command line run as a user runs it: a child process, its exit code and output."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

CLI = (sys.executable, "-m", "core.edge.cli.main")
"""This tree's CLI, as the installed `crosstalk` launcher runs it."""

LOOPBACK = {"NO_PROXY": "127.0.0.1,localhost"}
"""A test gateway listens on loopback: no proxy between the CLI and it."""


async def run_cli(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path | None = None,
    stdin: int | None = None,
) -> tuple[int, str, str]:
    """Any `crosstalk` command line (module or launcher) with exactly `env`, within a minute."""
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=dict(env),
        stdin=stdin,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode or 0, out.decode(), err.decode()


async def crosstalk(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    return await run_cli([*CLI, *args], env={**os.environ, **(env or {})})


async def crosstalk_at(url: str, token: str, *args: str) -> tuple[int, str, str]:
    """The CLI against a running test gateway at `url`."""
    return await crosstalk(*args, "--url", url, "--token", token, env=LOOPBACK)
