"""The web-chat URL carries the token only on the start that generated it (D12): an operator's
own token, or one generated on an earlier start, never reaches stdout (and so journald)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.fakes.model import FakeModelServer
from tests.gateway_process import GatewayProcess, write_config


def _web_chat_line(gw: GatewayProcess) -> str:
    return next(line for line in gw.output if line.startswith("Web chat:"))


async def test_only_the_generating_start_prints_the_token(
    tmp_path: Path, fake_model: FakeModelServer
) -> None:
    state = tmp_path / "state"
    config = write_config(tmp_path / "crosstalk.yaml", state, fake_model)
    config.write_text(config.read_text().replace("  auth:\n    token: e2e-token\n", ""))
    async with GatewayProcess(config) as gw:
        match = re.search(r"\?token=(\S+)", _web_chat_line(gw))
        assert match, gw.output
        token = (state / "gateway-token").read_text().strip()
        assert match.group(1) == token
        gw.token = token
        assert (await gw.request("GET", "/api/deliveries"))[0] == 200
    async with GatewayProcess(config) as gw:
        line = _web_chat_line(gw)
        assert "token=" not in line.replace("?token=<", "")
        assert line.startswith(f"Web chat: {gw.url}/")
        gw.token = token
        assert (await gw.request("GET", "/api/deliveries"))[0] == 200
    assert token not in "".join(gw.output)


async def test_a_configured_token_is_never_printed(
    tmp_path: Path, fake_model: FakeModelServer
) -> None:
    config = write_config(tmp_path / "crosstalk.yaml", tmp_path / "state", fake_model)
    async with GatewayProcess(config) as gw:
        assert (await gw.request("GET", "/api/deliveries"))[0] == 200
        assert "e2e-token" not in "".join(gw.output)
        assert _web_chat_line(gw).startswith(f"Web chat: {gw.url}/")
