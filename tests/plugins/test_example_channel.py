"""The example package's `loopback` channel (D38) in the real gateway process: a message in
through it, the agent's reply out through it, its `channels.loopback` section validated by its
own model, and `plugins.disabled: [example]` removing it with the plugin's command and tool.

The package is pip-installed once per module by the fixture in tests/plugins/conftest.py."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from tests.fakes.model import FakeModelServer
from tests.gateway_process import GatewayProcess, write_config
from tests.polling import eventually

LOOPBACK = "channels:\n  loopback:\n    owners: ['ann']\n"


def config(tmp_path: Path, fake_model: FakeModelServer, extra: str = "") -> Path:
    return write_config(
        tmp_path / "crosstalk.yaml",
        tmp_path / "state",
        fake_model,
        "session:\n  dmScope: per-channel-peer\n" + LOOPBACK + extra,
    )


async def _sent(gw: GatewayProcess) -> list[dict[str, Any]] | None:
    status, body = await gw.request("GET", "/loopback/out")
    assert status == 200, body
    return list(body["sent"]) or None


async def test_message_in_and_reply_out_through_the_plugin_channel(
    tmp_path: Path,
    fake_model: FakeModelServer,
    example_plugin_path: str,
) -> None:
    async with GatewayProcess(
        config(tmp_path, fake_model), env={"PYTHONPATH": example_plugin_path}
    ) as gw:
        _, health = await gw.request("GET", "/healthz")
        assert {
            "channel": "loopback",
            "accountId": "default",
            "state": "connected",
        }.items() <= next(c for c in health["channels"] if c["channel"] == "loopback").items()
        gw.token, token = "wrong", gw.token
        assert (await gw.request("POST", "/loopback/in", {"from": "ann", "text": "hi"}))[0] == 401
        gw.token = token
        status, body = await gw.request("POST", "/loopback/in", {"from": "ann"})
        assert status == 400 and "text" in body["error"]
        status, _ = await gw.request("POST", "/loopback/in", {"from": "ann", "text": "hello loop"})
        assert status == 202
        sent = await eventually(lambda: _sent(gw), timeout=30)
        assert sent == [{"to": "ann", "text": "echo: hello loop"}]
        listed = await gw.invoke("sessions_list", {})
        assert any(":loopback:" in s["key"] for s in listed["sessions"])  # its own DM session


async def test_a_stranger_on_a_plugin_channel_gets_a_pairing_code_not_the_agent(
    tmp_path: Path,
    fake_model: FakeModelServer,
    example_plugin_path: str,
) -> None:
    """Safe by default (D39): a third-party channel is guarded like the platforms, so someone
    who is not an owner gets the D11 pairing reply and never reaches the model."""
    async with GatewayProcess(
        config(tmp_path, fake_model), env={"PYTHONPATH": example_plugin_path}
    ) as gw:
        status, _ = await gw.request(
            "POST", "/loopback/in", {"from": "mallory", "text": "let me in"}
        )
        assert status == 202
        [sent] = await eventually(lambda: _sent(gw), timeout=30)
        assert sent["to"] == "mallory"
        assert sent["text"].startswith("🔐 This bot only talks to people its owner approved.")
        [pending] = (await gw.request("GET", "/api/pairing"))[1]["requests"]
        assert pending["channel"] == "loopback" and pending["userId"] == "mallory"
        listed = await gw.invoke("sessions_list", {})
        assert not any(":loopback:" in s["key"] for s in listed["sessions"])
        assert fake_model.requests == []


async def test_disabled_plugin_removes_its_channel(
    tmp_path: Path,
    fake_model: FakeModelServer,
    example_plugin_path: str,
) -> None:
    cfg = config(tmp_path, fake_model, "plugins:\n  disabled: [example]\n")
    async with GatewayProcess(cfg, env={"PYTHONPATH": example_plugin_path}) as gw:
        _, health = await gw.request("GET", "/healthz")
        assert "loopback" not in {c["channel"] for c in health["channels"]}
        status, _ = await gw.request("POST", "/loopback/in", {"from": "ann", "text": "hi"})
        assert status == 404


async def _config_check(path: Path, plugin_path: str) -> tuple[int, str]:
    import os

    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "core.edge.cli.main",
        "--config",
        str(path),
        "config",
        "check",
        env={**os.environ, "PYTHONPATH": plugin_path},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode or 0, out.decode()


async def test_the_channel_section_is_validated_by_its_model(
    tmp_path: Path,
    example_plugin_path: str,
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "channels:\n  loopback:\n    path: nope\n    colour: red\n  nope: {}\n", encoding="utf-8"
    )
    code, out = await _config_check(bad, example_plugin_path)
    assert code == 2, out
    assert "channels.loopback.colour: unknown key" in out
    assert "channels.loopback.path" in out
    assert "channels.nope: unknown key" in out  # the same error as for any unknown name
