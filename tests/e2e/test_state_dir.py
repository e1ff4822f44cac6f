"""One state directory (D130): the CLI reaches the gateway `./scripts/run` started, run as a user
runs it (child processes, a throw-away checkout, a fresh HOME, no CROSSTALK_* variables but the
port, which a shared test machine needs free)."""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import shlex
import shutil
import signal
import stat
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.cli import CLI, run_cli
from tests.gateway_process import free_port

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Checkout:
    root: Path
    home: Path
    port: int

    def env(self) -> dict[str, str]:
        clean = {k: v for k, v in os.environ.items() if not k.startswith("CROSSTALK_")}
        return {
            **clean,
            "HOME": str(self.home),
            "PATH": f"{self.root / '.venv' / 'bin'}:{os.environ['PATH']}",
            "CROSSTALK_GATEWAY_PORT": str(self.port),
            "NO_PROXY": "127.0.0.1,localhost",
        }

    async def crosstalk(self, *args: str, cwd: Path | None = None) -> tuple[int, str, str]:
        launcher = str(self.root / ".venv" / "bin" / "crosstalk")
        return await run_cli(
            [launcher, *args],
            env=self.env(),
            cwd=cwd or self.root,
            stdin=asyncio.subprocess.DEVNULL,
        )


def make_checkout(tmp_path: Path) -> Checkout:
    """scripts/run and pyproject.toml, and a .venv whose `crosstalk` is this tree's CLI."""
    root = tmp_path / "checkout"
    (root / "scripts").mkdir(parents=True)
    (root / "docs").mkdir()
    shutil.copy2(ROOT / "scripts" / "run", root / "scripts" / "run")
    shutil.copy2(ROOT / "pyproject.toml", root / "pyproject.toml")
    bin_dir = root / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    launcher = shlex.join(CLI)
    (bin_dir / "crosstalk").write_text(
        f'#!/bin/sh\nPYTHONPATH={shlex.quote(str(ROOT))} exec {launcher} "$@"\n'
    )
    (bin_dir / "crosstalk").chmod(0o755)
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    (root / ".venv" / ".crosstalk-install-stamp").write_text(digest + "\n")
    home = tmp_path / "home"
    home.mkdir()
    return Checkout(root, home, free_port())


@dataclass
class Started:
    proc: asyncio.subprocess.Process
    lines: list[str]


async def start(checkout: Checkout, argv: list[str]) -> Started:
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=checkout.root,
        env=checkout.env(),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
    )
    lines: list[str] = []
    assert proc.stdout is not None
    while not any(line.startswith("Web chat:") for line in lines):
        line = await asyncio.wait_for(proc.stdout.readline(), 60)
        assert line, "".join(lines)
        lines.append(line.decode(errors="replace"))
    return Started(proc, lines)


async def stop(started: Started) -> None:
    if started.proc.returncode is None:
        os.killpg(started.proc.pid, signal.SIGTERM)
    await asyncio.wait_for(started.proc.communicate(), 30)


@pytest.fixture
async def run_started(tmp_path: Path) -> AsyncIterator[tuple[Checkout, Started]]:
    checkout = make_checkout(tmp_path)
    started = await start(checkout, ["./scripts/run"])
    try:
        yield checkout, started
    finally:
        await stop(started)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def test_the_cli_finds_the_gateway_scripts_run_started(
    run_started: tuple[Checkout, Started],
) -> None:
    checkout, started = run_started
    state = checkout.root / ".crosstalk"
    assert f"State: {state} " in "".join(started.lines)
    token = (state / "gateway-token").read_text().strip()
    assert f"?token={token}" in "".join(started.lines)  # the generating start prints it (D12)
    assert mode(state) == 0o700 and mode(state / "gateway-token") == 0o600
    for cwd in (checkout.root, checkout.root / "docs"):
        code, out, err = await checkout.crosstalk("sessions", "list", cwd=cwd)
        assert code == 0, err
        assert "session(s)" in out
    code, out, err = await checkout.crosstalk("deliveries")
    assert (code, out.strip()) == (0, "no deliveries"), err
    assert not (checkout.home / ".crosstalk").exists()  # no second state dir, no second token


async def test_a_client_without_the_token_says_where_it_looked(
    run_started: tuple[Checkout, Started], tmp_path: Path
) -> None:
    checkout, _ = run_started
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code, out, err = await checkout.crosstalk("sessions", "list", cwd=elsewhere)
    assert code == 1 and out == ""
    home_state = checkout.home / ".crosstalk"
    assert f"no gateway token to reach http://127.0.0.1:{checkout.port}" in err
    assert f"state directory read: {home_state}" in err
    assert "CROSSTALK_STATE_DIR" in err and "--token" in err
    assert not home_state.exists()  # a client command never creates a token (D130)

    code, out, err = await checkout.crosstalk("sessions", "list", "--token", "wrong")
    assert code == 1
    assert f"the gateway at http://127.0.0.1:{checkout.port} refused the token from --token" in err
    assert "Unauthorized" not in err and "Traceback" not in err

    code, out, err = await checkout.crosstalk("mcp", "--token", "wrong")
    assert code == 1 and "refused the token" in err, err
    assert not re.search(r"Traceback|ExceptionGroup|TaskGroup", err), err


async def test_crosstalk_gateway_in_the_checkout_reopens_the_same_state(
    tmp_path: Path,
) -> None:
    checkout = make_checkout(tmp_path)
    first = await start(checkout, ["./scripts/run"])
    await stop(first)
    token = (checkout.root / ".crosstalk" / "gateway-token").read_text().strip()
    again = await start(checkout, [str(checkout.root / ".venv" / "bin" / "crosstalk"), "gateway"])
    try:
        text = "".join(again.lines)
        assert f"State: {checkout.root / '.crosstalk'} " in text
        assert "?token=<token> (the token: the file " in text and token not in text
        code, _, err = await checkout.crosstalk("sessions", "list")
        assert code == 0, err
    finally:
        await stop(again)
    assert not (checkout.home / ".crosstalk").exists()


async def test_version_and_mcp_without_a_gateway(tmp_path: Path) -> None:
    checkout = make_checkout(tmp_path)
    code, out, _ = await checkout.crosstalk("--version")
    assert code == 0 and re.fullmatch(r"crosstalk \S+.*\n", out)
    (checkout.root / ".crosstalk").mkdir(mode=0o700)
    (checkout.root / ".crosstalk" / "gateway-token").write_text("t\n")
    code, _, err = await checkout.crosstalk("mcp")  # nothing listens on the port
    assert code == 1 and "cannot reach the gateway" in err and "Traceback" not in err, err
