"""End to end: the real `crosstalk gateway` with `logging.format: json` and `GET /metrics`."""

from __future__ import annotations

import json
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from tests.fakes.model import FakeModelServer
from tests.fakes.model_script import ErrorReply
from tests.gateway_process import GatewayProcess, write_config
from tests.polling import eventually


async def test_json_logs_and_metrics_of_a_real_gateway(
    tmp_path: Path, fake_model: FakeModelServer
) -> None:
    config = write_config(
        tmp_path / "crosstalk.yaml", tmp_path / "state", fake_model, "logging:\n  format: json\n"
    )
    fake_model.script(ErrorReply(500, "model broke", "server_error"))
    async with GatewayProcess(config) as gw:
        status, _ = await gw.request(
            "POST",
            "/v1/chat/completions",
            {"model": "crosstalk", "messages": [{"role": "user", "content": "fail please"}]},
        )
        assert status != 200
        status, body = await gw.request(
            "POST",
            "/v1/chat/completions",
            {"model": "crosstalk", "messages": [{"role": "user", "content": "hello"}]},
        )
        assert status == 200, body

        def logged(logger: str) -> list[dict[str, object]]:
            records = [json.loads(line) for line in gw.output if line.startswith("{")]
            return [r for r in records if r["logger"] == logger]

        async def failure_logged() -> list[dict[str, object]]:
            return logged("core.engine.runs.manager")

        (failed,) = await eventually(failure_logged, what="the failed run's log line")
        assert failed["level"] == "WARNING" and "provider failed" in str(failed["message"])
        assert str(failed["sessionKey"]).startswith("agent:main:openai:")  # D80
        assert isinstance(failed["runId"], str) and failed["runId"] in str(failed["message"])
        # the provider's own words stay in the log (D12), on a line of the same turn
        (detail,) = logged("core.features.models.provider_errors")
        assert "model broke" in str(detail["message"]) and detail["runId"] == failed["runId"]

        status, text = await gw.request("GET", "/metrics")
        assert status == 200
        samples = {
            (s.name, s.labels.get("status")): s.value
            for f in text_string_to_metric_families(text)
            for s in f.samples
            if s.name == "crosstalk_turns_finished_total"
        }
        assert samples[("crosstalk_turns_finished_total", "ok")] == 1
        assert samples[("crosstalk_turns_finished_total", "error")] == 1
        gw.token = "wrong"
        assert (await gw.request("GET", "/metrics"))[0] == 401
    # besides the four `print`ed ready lines, everything the process wrote is JSON
    others = [line for line in gw.output if not line.startswith("{")]
    ready = ("Crosstalk gateway ready", "State:", "Web chat:", "Console:")
    assert all(line.startswith(ready) for line in others), others
