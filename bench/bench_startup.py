"""Gateway start time, idle resident memory and first reply after launch.

Targets (the brief): start ≤ 0.6 s (process spawn → web chat ready), idle RSS ≤ 80 MiB with a
model configured, first reply ≤ 1 s after launch (a message sent the moment the gateway is
ready gets its reply within 1 s of the launch). Runs the real `crosstalk gateway` on the
embedded defaults (SQLite, web chat) in a temporary state directory; with a model, the model
is the loopback fake (tests/fakes/model.py) served from this process.

    .venv/bin/python -m bench.bench_startup [--runs 5] [--with-model] [--first-reply]

The project's own modules are byte-compiled first (`compileall`, as `pip install` does), since
this environment may set PYTHONDONTWRITEBYTECODE and an editable checkout would then recompile
them at every launch (~0.1 s); `--no-compile` measures without that.

`--first-reply` implies a model: one `POST /v1/chat/completions` is sent as soon as the
`Web chat:` line appears, and the launch → reply time is printed (that run's idle RSS then
includes one finished turn). `--chat-open S` is the web chat's usual case instead: the chat page
is opened at ready (which starts the model-stack import, D54), the message is sent S seconds
later, and the time from sending it to its reply is printed beside a second message's.
"""

from __future__ import annotations

import argparse
import asyncio
import compileall
import os
import socket
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import aiohttp

from tests.fakes.model import FakeModelServer


@dataclass
class Result:
    ready: float
    rss_ready: float
    rss_idle: float
    first_reply: float | None
    after_open: tuple[float, float] | None = None
    """With `--chat-open`: send → reply of the first message and of a second one."""


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def _ask(url: str, token: str) -> None:
    body = {"messages": [{"role": "user", "content": "hello"}], "user": "bench"}
    async with (
        aiohttp.ClientSession() as http,
        http.post(
            url + "v1/chat/completions", json=body, headers={"Authorization": f"Bearer {token}"}
        ) as resp,
    ):
        data = await resp.json()
        if resp.status != 200:
            raise SystemExit(f"first reply failed: {resp.status} {data}")


async def _opened_then_asked(line: bytes, wait: float) -> tuple[float, float]:
    page = line.decode().split("Web chat: ", 1)[1].strip()
    url, _, token = page.partition("?token=")
    async with aiohttp.ClientSession() as http, http.get(page) as resp:
        await resp.read()  # the page starts the model-stack import (D54)
    await asyncio.sleep(wait)  # someone typing
    times = []
    for _ in range(2):
        t0 = time.perf_counter()
        await _ask(url, token)
        times.append(time.perf_counter() - t0)
    return times[0], times[1]


async def one(
    idle_seconds: float, model_url: str | None, first_reply: bool, chat_open: float | None = None
) -> Result:
    state = tempfile.mkdtemp(prefix="crosstalk-start-")
    env = {**os.environ, "CROSSTALK_STATE_DIR": state, "CROSSTALK_GATEWAY_PORT": str(_port())}
    if model_url is not None:
        cfg = Path(state) / "crosstalk.yaml"
        cfg.write_text(
            f"models:\n  providers:\n    local:\n      baseUrl: {model_url}\n"
            "      apiKey: t\nagents:\n  defaults:\n    model: local/fake-model\n"
        )
        env["CROSSTALK_CONFIG"] = str(cfg)
    t0 = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "core.edge.cli.main",
        "gateway",
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    while True:
        line = await proc.stdout.readline()
        if not line:
            raise SystemExit("gateway exited early")
        if b"Web chat:" in line:
            break
    ready = time.perf_counter() - t0
    replied: float | None = None
    opened = await _opened_then_asked(line, chat_open) if chat_open is not None else None
    if first_reply:
        url, _, token = line.decode().split("Web chat: ", 1)[1].strip().partition("?token=")
        await _ask(url, token)
        replied = time.perf_counter() - t0
    rss_ready = _rss_mib(proc.pid)
    await asyncio.sleep(idle_seconds)  # idle on purpose: this measures memory at rest
    rss_idle = _rss_mib(proc.pid)
    proc.terminate()
    await proc.wait()
    return Result(ready, rss_ready, rss_idle, replied, opened)


async def run_all(args: argparse.Namespace) -> list[Result]:
    if not (args.with_model or args.first_reply or args.chat_open is not None):
        return [await one(args.idle, None, False) for _ in range(args.runs)]
    async with FakeModelServer() as fake:
        return [
            await one(args.idle, fake.base_url, args.first_reply, args.chat_open)
            for _ in range(args.runs)
        ]


def _stats(label: str, values: list[float]) -> str:
    v = sorted(values)
    return f"{label}: min={v[0]:.2f} s median={v[len(v) // 2]:.2f} s max={v[-1]:.2f} s (n={len(v)})"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--idle", type=float, default=5.0)
    ap.add_argument(
        "--with-model", action="store_true", help="configure a model provider (the loopback fake)"
    )
    ap.add_argument(
        "--first-reply",
        action="store_true",
        help="send one chat completion at ready; print launch → reply",
    )
    ap.add_argument(
        "--chat-open",
        type=float,
        metavar="S",
        help="open the web chat at ready, send a message S s later; print send → reply",
    )
    ap.add_argument(
        "--no-compile",
        action="store_true",
        help="do not byte-compile core/, adapters/, plugins/ first",
    )
    args = ap.parse_args()
    if not args.no_compile:
        root = Path(__file__).resolve().parents[1]
        for package in ("core", "adapters", "plugins"):
            compileall.compile_dir(root / package, quiet=1)
    results = asyncio.run(run_all(args))
    print(_stats("start to ready", [r.ready for r in results]))
    replies = [r.first_reply for r in results if r.first_reply is not None]
    if replies:
        print(_stats("launch to first reply", replies))
        after = [r.first_reply - r.ready for r in results if r.first_reply is not None]
        print(_stats("ready to first reply", after))
    opened = [r.after_open for r in results if r.after_open is not None]
    if opened:
        first = sorted(o[0] * 1000 for o in opened)
        second = sorted(o[1] * 1000 for o in opened)
        print(
            f"chat opened at ready, message {args.chat_open:g} s later, send to reply: "
            f"first median={first[len(first) // 2]:.0f} ms (min {first[0]:.0f}, max "
            f"{first[-1]:.0f}), second median={second[len(second) // 2]:.0f} ms"
        )
    model = " (model configured)" if args.with_model or args.first_reply or opened else ""
    print(
        f"RSS at ready: {max(r.rss_ready for r in results):.0f} MiB; idle after "
        f"{args.idle:.0f} s{model} {max(r.rss_idle for r in results):.0f} MiB"
    )


if __name__ == "__main__":
    main()
