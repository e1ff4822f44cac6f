"""`crosstalk cron …` against a running gateway (child processes): the CLI round trip, the real
scheduler loop firing a due job within seconds, and jobs surviving a gateway restart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.cli import crosstalk
from tests.fakes.model import FakeModelServer
from tests.gateway_process import GatewayProcess, free_port, write_config
from tests.polling import eventually

CONFIG_JOB = """cron:
  minIntervalSeconds: 1
  jobs:
    - id: from-config
      schedule: "0 9 * * *"
      tz: Europe/Paris
      message: good morning
"""


async def test_cron_cli_through_a_running_gateway(
    tmp_path: Path, fake_model: FakeModelServer
) -> None:
    config = write_config(tmp_path / "crosstalk.yaml", tmp_path / "state", fake_model, CONFIG_JOB)
    port = free_port()
    async with GatewayProcess(config, port) as gw:
        common = ("--config", str(config))
        client = ("--url", gw.url, "--token", gw.token)

        async def cli(*args: str) -> tuple[int, str, str]:
            return await crosstalk(*common, "cron", *args, *client)

        code, out, err = await cli(
            "add", "tick", "--every", "1s", "--message", "ping", "--deliver", "none"
        )
        assert code == 0, err
        assert out.startswith("added tick (every 1s), next run ")
        code, _, err = await cli("add", "Bad", "--every", "1m", "--message", "x")
        assert code == 1 and "invalid id" in err
        assert err.count("\n") == 1 and err.startswith("error: ") and err.endswith("(HTTP 400)\n")

        async def ticked() -> Any:  # the real loop fires the due job within seconds
            status, job = await gw.request("GET", "/api/cron/tick")
            return job if status == 200 and job["lastStatus"] == "ok" else None

        job = await eventually(ticked, timeout=15, what="the every-1s job fired")
        assert job["runs"][0]["trigger"] == "schedule"
        code, out, err = await cli("disable", "tick")
        assert code == 0 and out.startswith("tick disabled"), err
        code, out, err = await cli("run", "tick")
        assert code == 0 and "in agent:main:cron:tick" in out, err
        code, out, _ = await cli("list")
        lines = out.splitlines()
        assert lines[-1] == "2 job(s)"
        assert lines[0].split()[:2] == ["from-config", "0"]
        assert "disabled" in lines[1] and lines[1].startswith("tick")
        code, out, _ = await cli("list", "--json")
        assert {j["id"] for j in json.loads(out)["jobs"]} == {"from-config", "tick"}
        sessions = await gw.invoke("sessions_list", {"kinds": ["cron"]})
        assert [(s["key"], s["channel"]) for s in sessions["sessions"]] == [
            ("agent:main:cron:tick", "internal")
        ]
        code, _, err = await cli(
            "add",
            "later",
            "--at",
            "2099-01-01T09:00:00",
            "--tz",
            "Europe/Paris",
            "--message",
            "far future",
        )
        assert code == 0, err
        code, _, err = await cli("rm", "from-config")
        assert code == 1 and "config file" in err
    async with GatewayProcess(config, port) as gw:  # restart: jobs and state are kept
        code, out, err = await crosstalk(
            "--config", str(config), "cron", "list", "--json", "--url", gw.url, "--token", gw.token
        )
        jobs = {j["id"]: j for j in json.loads(out)["jobs"]}
        assert set(jobs) == {"from-config", "tick", "later"}
        assert jobs["tick"]["enabled"] is False and jobs["tick"]["lastStatus"] == "ok"
        assert jobs["later"]["nextRunAt"] == 4070937600000  # 2099-01-01T08:00:00Z
        code, out, err = await crosstalk(
            "--config", str(config), "cron", "rm", "later", "--url", gw.url, "--token", gw.token
        )
        assert code == 0 and out.strip() == "removed later", err
