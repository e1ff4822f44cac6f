"""Cron and webhook turns in a real gateway process deliver through the gate to a fake platform
(FakeTelegram behind the real python-telegram-bot adapter); a deny rule suppresses one job's
delivery and the delivery log says so."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.model import FakeModelServer
from tests.fakes.telegram import FakeTelegram
from tests.gateway_process import GatewayProcess, write_config
from tests.polling import eventually

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")

CHAT = 4242


def _extra(fake: FakeTelegram) -> str:
    return f"""channels:
  telegram:
    botToken: "{fake.token}"
    apiBaseUrl: {fake.base_url}
    owners: ["1"]
session:
  sendPolicy:
    rules:
      - action: deny
        match: {{ keyPrefix: "agent:main:cron:quiet" }}
cron:
  jobs:
    - id: loud
      every: 1h
      message: loud job
      deliver: {{ channel: telegram, to: "{CHAT}" }}
    - id: quiet
      every: 1h
      message: quiet job
      deliver: {{ channel: telegram, to: "{CHAT}" }}
hooks:
  mappings:
    - id: ci
      path: ci
      token: hook-token-1234
      messageTemplate: "build {{{{ body.n }}}} {{{{ body.state }}}}"
      deliver: {{ channel: telegram, to: "{CHAT}" }}
"""


async def test_cron_and_hook_replies_reach_the_platform_through_the_gate(
    tmp_path: Path, fake_model: FakeModelServer, fake_telegram: FakeTelegram
) -> None:
    config = write_config(
        tmp_path / "crosstalk.yaml", tmp_path / "state", fake_model, _extra(fake_telegram)
    )
    async with GatewayProcess(config) as gw:
        status, body = await gw.request("POST", "/api/cron/loud/run")
        assert status == 202 and body["sessionKey"] == "agent:main:cron:loud"
        [call] = await fake_telegram.wait_for("sendMessage", timeout=20)
        assert call.params["text"] == "echo: loud job" and call.params["chat_id"] == CHAT
        status, body = await gw.request("POST", "/api/cron/quiet/run")
        assert status == 202

        async def quiet_logged() -> list[dict[str, object]]:
            _, data = await gw.request("GET", "/api/deliveries?session=agent:main:cron:quiet")
            return list(data["deliveries"])

        [row] = await eventually(quiet_logged, what="quiet delivery logged")
        assert (row["kind"], row["outcome"]) == ("cron", "suppressed_by_policy")
        status, hook = await gw.request(
            "POST",
            "/hooks/ci?wait=true",
            {"n": 7, "state": "green"},
            headers={"Authorization": "Bearer hook-token-1234"},
        )
        assert status == 200 and hook["reply"] == "echo: build 7 green"
        calls = await fake_telegram.wait_for("sendMessage", count=2, timeout=20)
        assert [c.params["text"] for c in calls] == ["echo: loud job", "echo: build 7 green"]

        async def both_recorded() -> dict[str, object] | None:
            _, jobs = await gw.request("GET", "/api/cron")
            status_of = {j["id"]: j["lastStatus"] for j in jobs["jobs"]}
            return status_of if None not in status_of.values() else None

        assert await eventually(both_recorded) == {"loud": "ok", "quiet": "ok"}
