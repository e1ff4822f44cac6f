"""Gateway overhead per agent turn with an instant in-process model (target: ≤ 10 ms).

Measures submit → run → store → wait for a plain reply, and for a turn with one tool call
(`sessions_list`) — everything but the model's own thinking time.

    .venv/bin/python -m bench.bench_turn [--turns 200]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from bench.common import summary, temp_config
from core.engine.runs import RunRequest
from core.runtime import Runtime


def instant(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[TextPart("ok")])


def with_tool(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    last = messages[-1]
    if any(getattr(p, "part_kind", "") == "tool-return" for p in last.parts):
        return ModelResponse(parts=[TextPart("listed")])
    return ModelResponse(parts=[ToolCallPart("sessions_list", {"limit": 5})])


async def bench(turns: int, fn: Any, label: str) -> None:
    rt = Runtime(temp_config())
    await rt.start(probe_models=False)
    if rt.warmup is not None:
        await rt.warmup
    rt.models._cache["fake/instant"] = FunctionModel(fn)  # the model is the network edge
    try:
        entry = await rt.services.ensure_session("agent:main:main")
        ctx = rt.services.context_for(entry)
        samples = []
        cpu0 = 0.0
        for i in range(turns + 20):
            if i == 20:
                cpu0 = time.process_time()
            t0 = time.perf_counter()
            run = await rt.runs.submit(
                RunRequest(session_key=entry.key, message=f"m{i}", context=ctx)
            )
            out = await rt.runs.wait(run.id, 10)
            if i >= 20:
                samples.append((time.perf_counter() - t0) * 1000)
            assert out.status == "ok", out
        cpu = (time.process_time() - cpu0) / turns * 1000
        print(summary(f"{rt.store.dialect} turn {label}", samples) + f" cpu={cpu:.2f} ms/turn")
    finally:
        await rt.stop()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=200)
    args = ap.parse_args()
    asyncio.run(bench(args.turns, instant, "plain reply"))
    asyncio.run(bench(args.turns, with_tool, "with one sessions_list tool call"))


if __name__ == "__main__":
    main()
