"""Chaos for decision D16: SIGKILL a real gateway process at random moments during a burst of
Telegram, Slack, WhatsApp or Signal messages, restart it, and check the ledger at the end.

Each fake redelivers as its platform does: Telegram the updates whose offset the killed process
had not confirmed, Slack the envelopes it had not acked, Meta the webhooks not answered 200, the
signal-cli daemon its events after the gateway's stored cursor. The fake model answers each
message with its text (every fourth one with a three-chunk reply). After the last kill a clean
gateway runs until everything has settled, then the store and the fake chat are compared:

* **duplicates**: a user message stored twice, a message with two runs, or a reply chunk shown
  twice in the chat without its ledger row saying `resent_after_crash`;
* **losses** (silent): a message never stored, a finished turn whose reply is neither in the chat
  nor `failed` in the delivery log, a chunk with a receipt that is not in the chat, or a chunk
  still `pending` (in doubt, neither reconciled nor marked);
* **aborted**: turns a kill interrupted (visible as `aborted` runs; D12's restart notice tells
  the chat).

Used by `tests/e2e/test_chaos.py` (short) and `bench/bench_chaos.py` (longer, prints figures).
The fake model and platforms are in `tests/chaos_fakes.py`, the ledger check in
`tests/chaos_ledger.py`.
"""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path

from core.store import Store
from tests.chaos_fakes import People, responder, write_config
from tests.chaos_ledger import ChaosReport, analyse, is_settled, ledger_counts
from tests.fakes.model import FakeModelServer
from tests.gateway_process import GatewayProcess, free_port
from tests.polling import eventually

__all__ = ["ChaosReport", "run_chaos"]

CHATS = (101, 102, 103)


async def run_chaos(
    tmp: Path,
    *,
    db_url: str | None = None,
    rounds: int = 3,
    burst: int = 6,
    seed: int = 1,
    kill_within: float = 1.5,
    platform: str = "telegram",
) -> ChaosReport:
    """`rounds` start → burst → SIGKILL cycles, then a clean run until settled; the report."""
    rng = random.Random(seed)
    report = ChaosReport(f"{platform}/{'postgresql' if db_url else 'sqlite'}")
    t0 = time.perf_counter()
    model, people = FakeModelServer(), People(platform)
    tg = people.fake
    await model.start()
    await tg.start()
    model.set_responder(responder)
    state = tmp / "state"
    cfg = write_config(tmp / "chaos.yaml", state, model, tg, db_url)
    port = free_port()
    people.listen_on(port)
    sent: list[str] = []
    try:
        for _ in range(rounds):
            gw = GatewayProcess(cfg, port)
            await gw.__aenter__()
            for _ in range(burst):
                said = f"m{len(sent):04d}"
                await people.say(rng.choice(CHATS), said)
                sent.append(said)
                await asyncio.sleep(rng.uniform(0, kill_within / burst))  # chaos, not a wait
            await asyncio.sleep(rng.uniform(0, kill_within))  # kill at a random moment
            await gw.kill()
            report.kills += 1
        async with GatewayProcess(cfg, port) as final:
            store = Store(db_url or f"sqlite+aiosqlite:///{state}/crosstalk.db", state)
            try:

                async def settled() -> bool:
                    return await is_settled(store, sent)

                try:
                    await eventually(settled, timeout=120)
                except AssertionError:
                    report.problems.append(f"not settled within 120s: {await ledger_counts(store)}")
                else:
                    await analyse(store, people, sent, report)
            finally:
                await store.close()
            if report.problems:
                report.problems += [
                    ln.rstrip()
                    for ln in final.output
                    if "Error" in ln or "WARNING" in ln or "ERROR" in ln
                ]
    finally:
        await tg.stop()
        await model.stop()
    report.messages = len(sent)
    report.seconds = time.perf_counter() - t0
    return report
