"""Every command README.md and docs/ print, run exactly as printed (placeholders filled in).

`./scripts/run` runs in a throw-away checkout (a copy of the script and pyproject.toml, and a
`.venv` whose `crosstalk` is this interpreter's CLI) with the install stamp in place, so it must
start the gateway without reinstalling; the gateway is started, found healthy on /healthz and
stopped. `./scripts/test` cannot run inside the suite (it would recurse): it is checked to be a
valid bash script. Client commands run against a gateway started by `crosstalk gateway --config
FILE`.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import shlex
import shutil
import signal
import sys
from pathlib import Path

import aiohttp
import pytest

from tests.fakes.model import FakeModelServer
from tests.gateway_process import free_port
from tests.polling import eventually

ROOT = Path(__file__).resolve().parents[2]


def printed_commands() -> list[str]:
    """Command lines of README.md and docs/*.md: indented code lines and inline `code`."""
    found: list[str] = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = doc.read_text(encoding="utf-8")
        candidates = [line.strip() for line in text.splitlines() if line.startswith("    ")]
        candidates += re.findall(r"`([^`\n]+)`", text)
        for cand in candidates:
            cmd = cand.split("  #", 1)[0].strip()
            if re.match(r"^(\./scripts/\w+|crosstalk [a-z])", cmd) and cmd not in found:
                found.append(cmd)
    return found


ABSENT = ("CODE", "USER_ID", "ID")
"""Placeholders naming something a fresh gateway does not have (a pairing code, an approved
sender, a cron job): such a command must reach the gateway and be told so (exit 1), never fail
to parse (exit 2) or crash."""


def fill(cmd: str, config: Path) -> list[str]:
    """Placeholders as a reader fills them: optional parts taken, first of `a|b` alternatives."""
    cmd = re.sub(r"\[([^\]]+)\]", r"\1", cmd)
    subs = {
        "FILE": str(config),
        "KEY": "main",
        "NAME": "sessions_list",
        "JSON": "{}",
        "CH": "telegram",
        "CHANNEL": "telegram",
        **{p: p.lower() for p in ABSENT},
    }
    out = []
    for word in shlex.split(cmd):
        word = subs.get(word, word)
        out.append(word.split("|", 1)[0] if "|" in word and " " not in word else word)
    return out


def write_yaml(path: Path, state: Path, port: int, fake: FakeModelServer) -> Path:
    path.write_text(
        f"gateway:\n  port: {port}\n  stateDir: {state}\n  auth:\n    token: readme-token\n"
        f"models:\n  providers:\n    fake:\n      baseUrl: {fake.base_url}\n      apiKey: t\n"
        "agents:\n  defaults:\n    model: fake/fake-model\n",
        encoding="utf-8",
    )
    return path


def crosstalk_exe() -> list[str]:
    exe = Path(sys.executable).parent / "crosstalk"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "core.edge.cli.main"]


async def run(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode or 0, out.decode(errors="replace")


async def start_stop(
    argv: list[str], cwd: Path, port: int, env: dict[str, str] | None = None
) -> str:
    """Start a gateway command, wait for /healthz (30 s at most), stop it with SIGTERM."""
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env={**os.environ, "NO_PROXY": "127.0.0.1", **(env or {})},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
    )
    healthy = False
    try:
        healthy = await wait_healthy(port, proc)
    finally:
        if proc.returncode is None:
            os.killpg(proc.pid, signal.SIGTERM)
        out, _ = await asyncio.wait_for(proc.communicate(), 20)
    text = out.decode(errors="replace")
    assert healthy, f"{argv} never became healthy:\n{text}"
    return text


def test_the_docs_print_the_commands_this_test_runs() -> None:
    printed = printed_commands()
    for cmd in (
        "./scripts/run",
        "./scripts/test",
        "./scripts/run --config crosstalk.yaml",
        "crosstalk gateway [--config FILE]",
        "crosstalk config check",
        "crosstalk db upgrade",
    ):
        assert cmd in printed, printed


async def test_scripts_run_as_printed_starts_without_reinstalling(
    tmp_path: Path, fake_model: FakeModelServer
) -> None:
    checkout = tmp_path / "checkout"
    (checkout / "scripts").mkdir(parents=True)
    shutil.copy2(ROOT / "scripts" / "run", checkout / "scripts" / "run")
    shutil.copy2(ROOT / "pyproject.toml", checkout / "pyproject.toml")
    bin_dir = checkout / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    calls = tmp_path / "python-calls"
    # a reinstall would call .venv/bin/python (pip) or python3 (venv): both only leave a trace
    for name in ("python", "python3"):
        (bin_dir / name).write_text(f'#!/bin/sh\necho "$@" >> {calls}\nexit 1\n')
        (bin_dir / name).chmod(0o755)
    launcher = " ".join(shlex.quote(a) for a in crosstalk_exe())
    (bin_dir / "crosstalk").write_text(f'#!/bin/sh\nexec {launcher} "$@"\n')
    (bin_dir / "crosstalk").chmod(0o755)
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    (checkout / ".venv" / ".crosstalk-install-stamp").write_text(digest + "\n")
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}"}

    port = free_port()
    write_yaml(checkout / "crosstalk.yaml", checkout / "state-a", port, fake_model)
    assert "./scripts/run --config crosstalk.yaml" in printed_commands()
    # healthy on the port only crosstalk.yaml names: the config was read
    await start_stop(["./scripts/run", "--config", "crosstalk.yaml"], checkout, port, env)

    port = free_port()
    out = await start_stop(
        ["./scripts/run"], checkout, port, {**env, "CROSSTALK_GATEWAY_PORT": str(port)}
    )
    assert "Web chat:" in out
    assert (checkout / ".crosstalk" / "crosstalk.db").exists()  # the embedded default
    assert not calls.exists(), calls.read_text()  # nothing was reinstalled

    # a changed pyproject.toml does reinstall (here the stand-in python3 refuses, so it stops)
    with (checkout / "pyproject.toml").open("a") as fh:
        fh.write("# changed\n")
    code, out = await run(["./scripts/run"], checkout, env)
    assert code != 0 and calls.read_text().startswith("-m venv .venv"), out

    code, out = await run(["bash", "-n", str(ROOT / "scripts" / "test")], tmp_path)
    assert code == 0, out


@pytest.mark.timeout(300)  # one CLI process per printed command (~2-5 s each on a busy machine)
async def test_cli_commands_as_printed_with_config_after_the_subcommand(
    tmp_path: Path, fake_model: FakeModelServer
) -> None:
    port = free_port()
    config = write_yaml(tmp_path / "crosstalk.yaml", tmp_path / "state", port, fake_model)
    cli = [c for c in printed_commands() if c.startswith("crosstalk ")]
    gateway_cmds = [c for c in cli if c.startswith("crosstalk gateway")]
    assert gateway_cmds
    for cmd in gateway_cmds:
        # a bare `crosstalk gateway` finds its file through $CROSSTALK_CONFIG, as README says
        await start_stop(
            crosstalk_exe() + fill(cmd, config)[1:],
            tmp_path,
            port,
            {"CROSSTALK_CONFIG": str(config)},
        )
    for cmd in (c for c in cli if c.startswith(("crosstalk config", "crosstalk db"))):
        for argv in (fill(cmd, config)[1:], [*fill(cmd, config)[1:], "--config", str(config)]):
            code, out = await run(
                crosstalk_exe() + argv, tmp_path, {"CROSSTALK_STATE_DIR": str(tmp_path / "state")}
            )
            assert code == 0, (argv, out)
    code, out = await run([*crosstalk_exe(), "config", "check", "--config", str(config)], tmp_path)
    assert code == 0 and f'"port": {port}' in out, out

    # client commands reach the gateway the config names (port, token)
    proc = await asyncio.create_subprocess_exec(
        *crosstalk_exe(),
        "gateway",
        "--config",
        str(config),
        cwd=tmp_path,
        env={**os.environ, "NO_PROXY": "127.0.0.1"},
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        assert await wait_healthy(port, proc)
        for cmd in cli:
            if cmd.startswith(("crosstalk gateway", "crosstalk config", "crosstalk db")):
                continue
            argv = [*fill(cmd, config)[1:], "--config", str(config)]
            code, out = await run(crosstalk_exe() + argv, tmp_path)
            if any(p in cmd.split() for p in ABSENT):
                assert code == 1 and "Traceback" not in out, (argv, out)
                assert re.search(
                    r"no pending|not approved|not linked|unknown|not found", out, re.I
                ), out
            else:
                assert code == 0, (argv, out)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), 20)


async def wait_healthy(port: int, proc: asyncio.subprocess.Process) -> bool:
    """True once /healthz answers 200; False if the process exits first (30 s at most)."""

    async def check() -> bool:
        if proc.returncode is not None:
            return True
        try:
            async with (
                aiohttp.ClientSession() as http,
                http.get(f"http://127.0.0.1:{port}/healthz") as resp,
            ):
                return resp.status == 200
        except aiohttp.ClientError:
            return False

    await eventually(check, 30, "gateway healthy")
    return proc.returncode is None
