"""The example third-party plugin (tests/plugins/example_plugin), installed with pip, in the
real gateway process: its owner-only command, its tool called by the (fake) model, and
``plugins.disabled: [example]`` removing both.

The package is pip-installed into a throw-away ``--target`` directory that only the gateway
child process sees (PYTHONPATH), so the rest of the suite keeps its exact tool and command sets.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.model import FakeModelServer
from tests.fakes.model_script import RequestJSON, text, tool_call, tool_names, tool_results
from tests.fakes.telegram import FakeTelegram
from tests.gateway_process import GatewayProcess, write_config

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")

OWNER, GUEST = 4242, 7


def config(tmp_path: Path, fake_model: FakeModelServer, tg: FakeTelegram, extra: str = "") -> Path:
    return write_config(
        tmp_path / "crosstalk.yaml",
        tmp_path / "state",
        fake_model,
        "session:\n  dmScope: per-channel-peer\n"
        f"channels:\n  telegram:\n    botToken: '{tg.token}'\n"
        f"    apiBaseUrl: {tg.base_url}\n    owners: ['{OWNER}']\n    dmPolicy: open\n"
        "    streaming: 'off'\n" + extra,
    )  # replies land whole; previews have their own tests


def weather_script(req: RequestJSON) -> Any:
    results = tool_results(req)
    if results:
        return text("Forecast: " + json.loads(results[-1]["content"])["forecast"])
    if "example_weather" in tool_names(req):
        return tool_call("example_weather", {"city": "Oslo"})
    return None  # the default echo


def texts_to(tg: FakeTelegram, chat: int) -> list[str]:
    return [
        str(c.params["text"])
        for c in tg.calls_for("sendMessage")
        if str(c.params["chat_id"]) == str(chat)
    ]


async def test_command_permission_and_tool_through_the_gateway(
    tmp_path: Path,
    fake_model: FakeModelServer,
    fake_telegram: FakeTelegram,
    example_plugin_path: str,
) -> None:
    fake_model.set_responder(weather_script)
    async with GatewayProcess(
        config(tmp_path, fake_model, fake_telegram), env={"PYTHONPATH": example_plugin_path}
    ):
        fake_telegram.user_message(OWNER, "/shout ship it")
        await fake_telegram.wait_for("sendMessage", 1, timeout=15)
        assert texts_to(fake_telegram, OWNER) == ["📣 SHIP IT"]

        fake_telegram.user_message(GUEST, "/shout let me in")
        await fake_telegram.wait_for("sendMessage", 2, timeout=15)
        assert texts_to(fake_telegram, GUEST) == ["⚙️ /shout is owner-only."]
        assert fake_model.requests == []  # neither command reached the model

        fake_telegram.user_message(OWNER, "what's the weather in Oslo?")
        await fake_telegram.wait_for("sendMessage", 3, timeout=30)
        assert texts_to(fake_telegram, OWNER)[-1] == "Forecast: snow, -3 °C"
        [result] = tool_results(fake_model.requests[-1])
        assert json.loads(result["content"]) == {
            "status": "ok",
            "city": "Oslo",
            "forecast": "snow, -3 °C",
        }

        fake_telegram.user_message(OWNER, "/help")
        await fake_telegram.wait_for("sendMessage", 4, timeout=15)
        assert "/shout — Shout a line back (owner-only)" in texts_to(fake_telegram, OWNER)[-1]


async def test_disabled_in_config_removes_command_and_tool(
    tmp_path: Path,
    fake_model: FakeModelServer,
    fake_telegram: FakeTelegram,
    example_plugin_path: str,
) -> None:
    cfg = config(tmp_path, fake_model, fake_telegram, "plugins:\n  disabled: [example]\n")
    async with GatewayProcess(cfg, env={"PYTHONPATH": example_plugin_path}) as gw:
        fake_telegram.user_message(OWNER, "/shout ship it")
        await fake_telegram.wait_for("sendMessage", 1, timeout=30)
        # No such command any more: an ordinary message, answered by the agent.
        assert texts_to(fake_telegram, OWNER) == ["echo: /shout ship it"]
        offered = tool_names(fake_model.requests[0])
        assert "example_weather" not in offered and "sessions_send" in offered
        status, body = await gw.request(
            "POST",
            "/tools/invoke",
            {"tool": "example_weather", "args": {"city": "Oslo"}, "sessionKey": "main"},
        )
        assert status == 404, body
