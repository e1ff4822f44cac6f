"""What a turn's history costs inside pydantic-ai (D57): one `Agent.run` with no history and with
HISTORY_LIMIT stored messages, in-process, against a pydantic-ai `FunctionModel` (no HTTP, no
OpenAI mapping), so the difference is pydantic-ai's own passes over the history plus our
`to_model_messages` (whose cache D57 measures here too).

    .venv/bin/python -m bench.bench_history_cost [--runs 400]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

from core.features.agent import transcript
from core.store import TranscriptMessage

HISTORY_LIMIT = 40  # agents.defaults.compaction.maxContextMessages (D71)


def history(n: int) -> list[TranscriptMessage]:
    out: list[TranscriptMessage] = []
    for i in range(n):
        role: Any = "user" if i % 2 == 0 else "assistant"
        m = TranscriptMessage.text(role, f"message {i} " * 8, 1_700_000_000_000 + i)
        m.id, m.seq = 10_000_000 + i, i + 1
        out.append(m)
    return out


async def bench(runs: int) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    def reply(_messages: list[ModelMessage], _info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart("ok")])

    agent = Agent(FunctionModel(reply), output_type=str)
    results: dict[int, list[float]] = {0: [], HISTORY_LIMIT: []}
    for _ in range(3):  # interleaved rounds: the machine's drift hits both sizes alike
        for n in results:
            msgs = history(n)
            t0 = time.perf_counter()
            for _ in range(runs):
                await agent.run(
                    "hi",
                    message_history=transcript.to_model_messages(msgs),
                    instructions="be brief",
                )
            results[n].append((time.perf_counter() - t0) / runs * 1000)
    for n, samples in results.items():
        print(f"history of {n} messages: Agent.run {min(samples):.2f} ms (best of 3 rounds)")
    msgs = history(HISTORY_LIMIT)
    t0 = time.perf_counter()
    for _ in range(runs):
        [transcript._build(m) for m in msgs]
    built = (time.perf_counter() - t0) / runs * 1000
    t0 = time.perf_counter()
    for _ in range(runs):
        transcript.to_model_messages(msgs)
    cached = (time.perf_counter() - t0) / runs * 1000
    print(
        f"to_model_messages of {HISTORY_LIMIT}: built {built:.3f} ms, reused (D57) {cached:.3f} ms"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=400)
    asyncio.run(bench(ap.parse_args().runs))


if __name__ == "__main__":
    main()
