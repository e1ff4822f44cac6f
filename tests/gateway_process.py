"""Run the real `crosstalk gateway` in a child process for end-to-end tests."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
from pathlib import Path
from typing import Any

import aiohttp

from tests.fakes.model import FakeModelServer


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def write_config(path: Path, state_dir: Path, fake: FakeModelServer, extra: str = "") -> Path:
    path.write_text(
        "gateway:\n"
        f"  stateDir: {state_dir}\n"
        "  auth:\n    token: e2e-token\n"
        "models:\n  providers:\n    fake:\n"
        f"      baseUrl: {fake.base_url}\n      apiKey: test\n"
        "agents:\n  defaults:\n    model: fake/fake-model\n" + extra,
        encoding="utf-8",
    )
    return path


class GatewayProcess:
    """`async with GatewayProcess(config) as gw:` — started, healthy, then stopped by SIGTERM."""

    def __init__(
        self,
        config: Path,
        port: int | None = None,
        env: dict[str, str] | None = None,
        *,
        prefix: list[str] | None = None,
        ready_within: float = 30,
    ) -> None:
        """`prefix`: a command the gateway runs under (valgrind, for bench/); `ready_within`:
        seconds until its `Web chat:` line."""
        self.config = config
        self.extra_env = env or {}
        self.prefix = prefix or []
        self.ready_within = ready_within
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.token = "e2e-token"
        self.proc: asyncio.subprocess.Process | None = None
        self.output: list[str] = []
        self._drainer: asyncio.Future[None] | None = None

    async def __aenter__(self) -> GatewayProcess:
        env = {
            **os.environ,
            "CROSSTALK_GATEWAY_PORT": str(self.port),
            "NO_PROXY": "127.0.0.1,localhost",
            **self.extra_env,
        }
        self.proc = await asyncio.create_subprocess_exec(
            *self.prefix,
            sys.executable,
            "-m",
            "core.edge.cli.main",
            "--config",
            str(self.config),
            "gateway",
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        await asyncio.wait_for(self._wait_ready(), self.ready_within)
        return self

    async def _wait_ready(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        while True:
            line = await self.proc.stdout.readline()
            if not line:
                raise AssertionError("gateway exited:\n" + "".join(self.output))
            self.output.append(line.decode(errors="replace"))
            if b"Web chat:" in line:
                self._drainer = asyncio.ensure_future(self._drain())
                return

    async def _drain(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            self.output.append(line.decode(errors="replace"))

    async def kill(self) -> None:
        """SIGKILL: no shutdown code runs, as in a crash or an OOM kill."""
        if self.proc is not None and self.proc.returncode is None:
            self.proc.kill()
            await asyncio.wait_for(self.proc.wait(), 20)
        if self._drainer is not None:
            await asyncio.wait_for(self._drainer, 5)

    async def __aexit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.terminate()
            await asyncio.wait_for(self.proc.wait(), 20)

    async def request(
        self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
    ) -> tuple[int, Any]:
        hdrs = {"Authorization": f"Bearer {self.token}", **(headers or {})}
        async with (
            aiohttp.ClientSession() as http,
            http.request(method, self.url + path, json=body, headers=hdrs) as resp,
        ):
            text = await resp.text()
            try:
                return resp.status, json.loads(text)
            except ValueError:
                return resp.status, text

    async def invoke(
        self, tool: str, args: dict[str, Any], session: str = "main"
    ) -> dict[str, Any]:
        status, body = await self.request(
            "POST", "/tools/invoke", {"tool": tool, "args": args, "sessionKey": session}
        )
        assert status == 200, body
        details: dict[str, Any] = body["result"]["details"]
        return details
