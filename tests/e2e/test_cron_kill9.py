"""kill -9 while a cron job's or a webhook's turn runs (D29, D81, issue 25): after the restart
a cron firing happens again, once, and its reply is delivered once; a `cron run` the crash cut
short too (it was accepted with a 202, and vanished: no run, no reply, no `lastStatus`); a
webhook turn that was accepted and queued runs and its reply is delivered (it ran, and its
reply went nowhere)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.gateway_chat import Held
from tests.fakes.model import FakeModelServer
from tests.gateway_process import GatewayProcess, write_config
from tests.polling import eventually


@pytest.mark.parametrize("how", ["manual run", "one-shot"])
async def test_a_firing_cut_short_by_kill_9_happens_again_once(
    tmp_path: Path, fake_model: FakeModelServer, how: str
) -> None:
    held = Held("do it")
    fake_model.set_responder(held)
    config = write_config(
        tmp_path / "crosstalk.yaml", tmp_path / "state", fake_model, "cron:\n  pollSeconds: 0.2\n"
    )
    job: dict[str, Any] = {"id": "j", "message": "do it"}
    job["deliver"] = {"channel": "webchat", "to": "main"}
    if how == "manual run":
        job["every"] = "1h"
    async with GatewayProcess(config) as first:
        if how == "one-shot":
            job["at"] = (datetime.now(UTC) + timedelta(seconds=1)).isoformat()
        assert (await first.request("POST", "/api/cron", job))[0] == 201
        if how == "manual run":
            assert (await first.request("POST", "/api/cron/j/run"))[0] == 202
        await fake_model.wait_for_requests(1, timeout=30)
        await first.kill()
        port = first.port
    held.hold.clear()
    held.release.set()
    async with GatewayProcess(config, port=port) as again:
        await fake_model.wait_for_requests(2, timeout=30)

        async def delivered() -> list[Any] | None:
            _, body = await again.request("GET", "/api/deliveries?limit=20")
            rows = [d for d in body["deliveries"] if d["kind"] == "cron"]
            return rows or None

        rows = await eventually(delivered, timeout=20, what="the cron reply delivered")
        assert [(d["outcome"], d.get("text")) for d in rows] == [("delivered", "echo: do it")]
        status, body = await again.request("GET", "/api/cron/j")
        if how == "one-shot":
            assert status == 404  # fired, then gone
        else:
            assert body["lastStatus"] == "ok" and len(body["runs"]) == 1
    assert len(fake_model.requests) == 2


HOOKS = """hooks:
  mappings:
    - id: ci
      path: ci
      token: hook-secret-123
      sessionKey: ci-feed
      messageTemplate: "CI {{ body.n }}"
      deliver: {channel: webchat, to: main}
"""


async def test_a_queued_webhook_turn_is_answered_after_kill_9(
    tmp_path: Path, fake_model: FakeModelServer
) -> None:
    held = Held("CI 1")
    fake_model.set_responder(held)
    config = write_config(tmp_path / "crosstalk.yaml", tmp_path / "state", fake_model, HOOKS)
    token = {"x-crosstalk-hook-token": "hook-secret-123", "Authorization": ""}
    async with GatewayProcess(config) as first:
        assert (await first.request("POST", "/hooks/ci", {"n": 1}, headers=token))[0] == 202
        await fake_model.wait_for_requests(1, timeout=30)
        assert (await first.request("POST", "/hooks/ci", {"n": 2}, headers=token))[0] == 202
        await first.kill()  # "CI 2" waits behind "CI 1" in the mapping's one session
        port = first.port
    held.hold.clear()
    held.release.set()
    async with GatewayProcess(config, port=port) as again:

        async def delivered() -> list[Any] | None:
            _, body = await again.request("GET", "/api/deliveries?limit=20")
            return [d for d in body["deliveries"] if d["kind"] == "hook"] or None

        rows = await eventually(delivered, timeout=30, what="the queued hook's reply")
        assert [(d["outcome"], d.get("text")) for d in rows] == [("delivered", "echo: CI 2")]
    assert [r["messages"][-1]["content"] for r in fake_model.requests] == ["CI 1", "CI 2"]
