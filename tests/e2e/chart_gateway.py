"""A gateway process whose model draws a chart (D78): the fake model calls the MCP server's
`chart` tool, which returns a PNG, then answers `REPLY`; the config takes one channel's YAML."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.fakes.mcp_server import REPO_ROOT
from tests.fakes.model import FakeModelServer

REPLY = "Chart above."


def chart_config(tmp: Path, model: FakeModelServer, channel: str) -> Path:
    path = tmp / "gateway.yaml"
    path.write_text(
        "gateway:\n"
        f"  stateDir: {tmp / 'state'}\n"
        "  auth:\n    token: e2e-token\n  reconcileAfterSeconds: 0\n"
        "models:\n  providers:\n    fake:\n"
        f"      baseUrl: {model.base_url}\n      apiKey: test\n"
        "agents:\n  defaults:\n    model: fake/fake-model\n"
        "mcp:\n  servers:\n    calc:\n"
        f"      command: {sys.executable}\n      args: ['-m', 'tests.fakes.mcp_server']\n"
        f"      env: {{PYTHONPATH: {REPO_ROOT}}}\n      timeoutSeconds: 15\n" + channel,
        encoding="utf-8",
    )
    return path
