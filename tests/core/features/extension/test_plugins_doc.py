"""The code in docs/PLUGINS.md works as printed: its Python blocks register through a real
PluginContext and its YAML block is a valid `plugins` config."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from core.config import CrosstalkConfig
from core.features.commands.parse import parse_command
from core.features.commands.registry import CommandRegistry
from core.features.extension.context import PluginContext
from core.features.inbound.pipeline import Inbound, InboundStep, InboundSteps, Proceed
from core.features.inbound.router import BUILT_IN_STEPS
from core.features.tools.registry import ToolRegistry
from core.model.delivery_context import DeliveryContext
from core.model.inbound import InboundMessage
from core.model.tool_context import ToolContext

DOC = Path(__file__).resolve().parents[4] / "docs" / "PLUGINS.md"


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


async def _passthrough(inbound: Inbound, proceed: Proceed) -> None:
    await proceed()


async def test_python_examples_register_and_run() -> None:
    tools, commands, inbound = ToolRegistry(), CommandRegistry(), InboundSteps()
    for name in BUILT_IN_STEPS:
        inbound.append(InboundStep(name, _passthrough))
    python = [b for b in blocks("python") if "def register" in b]  # channels: test_channel_doc
    assert len(python) == 3
    for source in python:
        namespace: dict[str, Any] = {}
        exec(compile(source, str(DOC), "exec"), namespace)
        namespace["register"](PluginContext("doc", tools=tools, commands=commands, inbound=inbound))
    assert inbound.names[-2:] == ["shout-guard", "run"]
    shouted = Inbound(
        InboundMessage(
            channel="doc",
            chat_type="direct",
            chat_id="u",
            sender_id="u",
            text="HEY",
            reply_to=DeliveryContext(channel="doc", to="u"),
        )
    )
    await inbound.handle(shouted)
    assert shouted.notes == {"shouted": True}
    parsed = parse_command("/shout hi")
    assert parsed is not None and commands.lookup(parsed) is not None
    ctx = ToolContext(session_key="agent:main:main", agent_id="main")
    env: Any = None  # the example tool does not use its environment
    assert await tools.invoke(env, "example_weather", {"city": "Lisbon"}, ctx) == {
        "status": "ok",
        "city": "Lisbon",
        "forecast": "sunny, 21 °C",
    }
    assert await tools.invoke(env, "example_weather", {"city": "Mars"}, ctx) == {
        "status": "error",
        "error": "no forecast for Mars",
    }


def test_yaml_example_is_a_valid_config() -> None:
    [source] = [b for b in blocks("yaml") if b.startswith("plugins:")]
    cfg = CrosstalkConfig.model_validate(yaml.safe_load(source))
    assert cfg.plugins.disabled == ["example"]
    assert cfg.plugins.options == {"example": {"greeting": "hi"}}
