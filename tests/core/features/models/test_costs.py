"""Usage and cost per run and per session: config prices, genai-prices, unknown prices."""

from __future__ import annotations

from typing import Any

import pytest

from core.api.testing import RecordingAdapter
from core.config import validate_config
from core.engine.runs import RunRequest
from core.features.models.costs import request_cost
from core.runtime import Runtime
from tests.conftest import RuntimeFactory
from tests.fakes.model import FakeModelServer

# /status from the adapter's default sender, who is no owner: its DM session (D62)
DM = "agent:main:testchat:dm:u1"


async def _turn(rt: Runtime, text: str, key: str = "agent:main:main") -> None:
    entry = await rt.services.ensure_session(key)
    run = await rt.services.start_run(
        RunRequest(session_key=entry.key, message=text, context=rt.services.context_for(entry))
    )
    assert (await rt.runs.wait(run.id, 30)).status == "ok"


async def _rows(rt: Runtime) -> list[dict[str, Any]]:
    entry = await rt.services.ensure_session("agent:main:main")
    out = await rt.tools.invoke(rt.tool_env, "sessions_list", {}, rt.services.context_for(entry))
    return list(out["sessions"])


async def test_config_prices_give_run_and_session_cost(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    adapter = RecordingAdapter()
    rt = await make_runtime(
        {
            "models": {
                "providers": {
                    "fake": {
                        "models": [{"id": "fake-model", "cost": {"input": 2.0, "output": 10.0}}]
                    }
                }
            }
        },
        adapters=[adapter],
    )
    await _turn(rt, "one", DM)  # the fake reports 10 prompt and 5 completion tokens
    run = await rt.store.last_run(DM)
    assert run is not None and run.meta is not None
    assert run.meta["costUsd"] == pytest.approx((10 * 2.0 + 5 * 10.0) / 1e6)
    await _turn(rt, "two", DM)
    entry = await rt.store.get_session(DM)
    assert entry is not None and entry.cost_usd == pytest.approx(2 * 7e-5)
    assert [r["costUsd"] for r in await _rows(rt) if r["key"] == DM] == [pytest.approx(1.4e-4)]
    await adapter.inject(adapter.message("/status"))
    status = (await adapter.wait_sent(1))[0]
    assert "Cost: $0.0001 this session (last run $0.0001)" in status
    assert "Answered by: fake/fake-model" in status


async def test_unknown_price_omits_cost(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await make_runtime()
    await _turn(rt, "one")
    run = await rt.store.last_run("agent:main:main")
    assert run is not None and run.meta is not None and "costUsd" not in run.meta
    assert run.meta["model"] == "fake/fake-model"
    assert (run.input_tokens, run.output_tokens) == (10, 5)
    assert "costUsd" not in (await _rows(rt))[0]


def test_genai_prices_for_vendor_endpoints_only() -> None:
    config = validate_config(
        {
            "models": {
                "providers": {
                    "openai": {"apiKey": "k"},
                    "claude": {"api": "anthropic-messages", "apiKey": "k"},
                    "local": {"baseUrl": "http://127.0.0.1:1/v1"},
                }
            }
        }
    )
    assert request_cost(config, "openai/gpt-4o", 1_000_000, 1_000_000) == pytest.approx(12.5)
    assert request_cost(config, "claude/claude-sonnet-4-5", 1000, 1000) == pytest.approx(0.018)
    assert request_cost(config, "local/gpt-4o", 1000, 1000) is None
    assert request_cost(config, "openai/no-such-model", 1000, 1000) is None
