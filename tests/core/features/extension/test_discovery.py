"""Plugin discovery through the `crosstalk.plugins` entry-point group, and config selection."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.config import CrosstalkConfig
from core.config.schema_plugins import PluginsConfig
from core.features.commands.parse import parse_command
from core.features.commands.registry import CommandRegistry
from core.features.extension.discovery import (
    PluginEntry,
    PluginError,
    discover,
    load_plugins,
    selected,
)
from core.features.tools.registry import ToolRegistry
from tests.gateway_process import free_port

BUILTINS = {"session-tools", "chat-commands", "cron-tools"}


def test_builtins_are_entry_points_of_our_distribution() -> None:
    found = {p.name: p for p in discover()}
    assert BUILTINS <= set(found)
    assert {found[n].dist for n in BUILTINS} == {"crosstalk"}


def test_builtins_register_through_the_same_api() -> None:
    tools, commands = ToolRegistry(), CommandRegistry()
    loaded = load_plugins(PluginsConfig(), tools=tools, commands=commands)
    assert BUILTINS <= set(loaded)
    assert {"sessions_send", "cron", "agents_list"} <= set(tools.names)
    parsed = parse_command("/pair list")
    assert parsed is not None
    assert commands.lookup(parsed) is not None


def test_disabled_wins_and_enabled_is_the_complete_list() -> None:
    found = (PluginEntry("a", "x:register", "crosstalk"), PluginEntry("b", "y:register", "other"))
    assert [p.name for p in selected(found, PluginsConfig(disabled=["a"]))] == ["b"]
    assert [p.name for p in selected(found, PluginsConfig(enabled=["b"]))] == ["b"]
    assert selected(found, PluginsConfig(enabled=["a", "b"], disabled=["a", "zzz"])) == [found[1]]
    with pytest.raises(PluginError, match="not installed: nope"):
        selected(found, PluginsConfig(enabled=["nope"]))


def test_disabling_a_builtin_removes_its_tools() -> None:
    tools, commands = ToolRegistry(), CommandRegistry()
    load_plugins(PluginsConfig(disabled=["cron-tools"]), tools=tools, commands=commands)
    assert "cron" not in tools.names and "sessions_list" in tools.names


def test_config_key_is_parsed() -> None:
    cfg = CrosstalkConfig.model_validate(
        {
            "plugins": {
                "enabled": ["chat-commands"],
                "disabled": ["example"],
                "options": {"example": {"greeting": "hi"}},
            }
        }
    )
    assert cfg.plugins.enabled == ["chat-commands"]
    assert cfg.plugins.options["example"] == {"greeting": "hi"}


def start_gateway(
    tmp_path: Path, plugins_yaml: str, pythonpath: str | None = None
) -> subprocess.CompletedProcess[str]:
    config = tmp_path / "crosstalk.yaml"
    config.write_text(
        f"gateway:\n  stateDir: {tmp_path / 'state'}\n" + plugins_yaml, encoding="utf-8"
    )
    env = {**os.environ, "CROSSTALK_GATEWAY_PORT": str(free_port())}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    return subprocess.run(
        [sys.executable, "-m", "core.edge.cli.main", "--config", str(config), "gateway"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


def test_a_missing_enabled_plugin_stops_the_gateway_start(tmp_path: Path) -> None:
    proc = start_gateway(tmp_path, "plugins:\n  enabled: [chat-commands, nope]\n")
    assert proc.returncode == 1, proc.stderr
    assert (
        "crosstalk: the gateway could not start: plugins.enabled names plugin(s) that are "
        "not installed: nope"
    ) in proc.stderr


def test_a_plugin_that_fails_to_register_stops_the_gateway_start(tmp_path: Path) -> None:
    """A real (if tiny) installed distribution: a dist-info with an entry point on the path."""
    site = tmp_path / "site"
    dist = site / "broken_plugin-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[crosstalk.plugins]\nbroken = broken_plugin:register\n")
    (site / "broken_plugin.py").write_text(
        "def register(ctx):\n    raise RuntimeError('no database for me')\n"
    )
    proc = start_gateway(tmp_path, "", pythonpath=str(site))
    assert proc.returncode == 1, proc.stderr
    assert (
        "crosstalk: the gateway could not start: plugin 'broken' failed to register: "
        "no database for me"
    ) in proc.stderr
    disabled = start_gateway(
        tmp_path, "plugins:\n  disabled: [broken]\n  enabled: [nope]\n", pythonpath=str(site)
    )
    assert "not installed: nope (installed: broken, chat-commands, " in disabled.stderr
