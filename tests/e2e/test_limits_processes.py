"""D64 across processes: two real `crosstalk gateway` processes on one PostgreSQL database, each
with its own Telegram bot (its own fake Bot API), count one person's turns against one budget.
The same Telegram user writes to both bots; the turn that goes over the limit is refused by
whichever process it reached, once per window, and the other process then refuses silently."""

from __future__ import annotations

import datetime as dt
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.model import FakeModelServer
from tests.fakes.telegram import FakeTelegram
from tests.gateway_process import GatewayProcess
from tests.pg import fresh_pg_database
from tests.polling import eventually

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.timeout(240),
    pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning"),
]
OWNER, PERSON = 4242, 7  # a guest (allowFrom "*") on both bots


def config(path: Path, state: Path, model: FakeModelServer, url: str, bot: FakeTelegram) -> Path:
    """One process: its own account of the telegram channel (leases are per account, D36)."""
    account = path.stem
    path.write_text(
        "gateway:\n"
        f"  stateDir: {state}\n"
        "  auth:\n    token: e2e-token\n"
        f"  database:\n    url: {url}\n"
        "models:\n  providers:\n    fake:\n"
        f"      baseUrl: {model.base_url}\n      apiKey: test\n"
        "agents:\n  defaults:\n    model: fake/fake-model\n"
        "cluster:\n  leaseSeconds: 10\n"
        "session:\n  dmScope: per-account-channel-peer\n"
        "limits:\n  guest:\n    turnsPerDay: 3\n"
        "channels:\n  webchat:\n    enabled: false\n"
        "  telegram:\n    owners: ['4242']\n    streaming: 'off'\n    accounts:\n"
        f"      {account}:\n"
        f"        botToken: '{bot.token}'\n        apiBaseUrl: {bot.base_url}\n"
        "        allowFrom: ['*']\n",
        encoding="utf-8",
    )
    return path


async def test_two_processes_count_one_persons_turns_once(
    tmp_path: Path, fake_model: FakeModelServer
) -> None:
    now = dt.datetime.now(dt.UTC)
    if now.hour == 23 and now.minute >= 57:  # the real clock of two child processes
        pytest.skip("too close to the UTC day's end for a day's budget")
    bots = [FakeTelegram("111111:TEST-bot-a"), FakeTelegram("222222:TEST-bot-b")]
    async with fresh_pg_database() as url, AsyncExitStack() as stack:
        for bot in bots:
            await bot.start()
            stack.push_async_callback(bot.stop)
        for name, bot in zip("ab", bots, strict=True):
            cfg = config(tmp_path / f"{name}.yaml", tmp_path / name, fake_model, url, bot)
            await stack.enter_async_context(GatewayProcess(cfg))
        a, b = bots
        sent = {id(a): 0, id(b): 0}

        async def say(bot: FakeTelegram, words: str, user: int = PERSON) -> str:
            bot.user_message(user, words)
            sent[id(bot)] += 1
            calls = await bot.wait_for("sendMessage", sent[id(bot)], timeout=30)
            return str(calls[-1].params["text"])

        assert await say(a, "one") == "echo: one"
        assert await say(b, "two") == "echo: two"
        assert await say(a, "three") == "echo: three"
        refusal = "⏳ Limit reached: turns per day (3/3). It resets at 00:00 UTC."
        assert await say(b, "four") == refusal  # process b knows of a's two turns
        a.user_message(PERSON, "five")  # refused by process a too, and not told twice
        dsn = url.replace("postgresql+asyncpg://", "postgresql://")

        async def five_kept_without_a_run() -> bool:
            rows = await sql(
                dsn,
                "SELECT meta->>'noRun' FROM messages WHERE content::text LIKE '%\"five\"%'",
            )
            return [r[0] for r in rows] == ["limit: turns per day"]

        await eventually(five_kept_without_a_run, 20, "a's refusal of 'five'")
        assert await say(a, "/whoami", user=OWNER) == "⚙️ You are owner on telegram (4242)."
        assert [str(c.params["text"]) for c in a.calls_for("sendMessage")][:2] == [
            "echo: one",
            "echo: three",
        ]
        assert len(fake_model.requests) == 3  # the refused turns asked no model


async def sql(dsn: str, query: str) -> list[Any]:
    import asyncpg

    conn = await asyncpg.connect(dsn)
    try:
        return list(await conn.fetch(query))
    finally:
        await conn.close()
