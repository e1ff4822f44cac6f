"""A short, bounded chaos run (decision D16): a real gateway process SIGKILLed at random moments
during bursts of messages from the fake Telegram / Slack / WhatsApp / Signal and a real IMAP
server (which redeliver what was not confirmed, acked, answered 200, stored or flagged \\Seen,
as the platforms do), on SQLite and
PostgreSQL; the ledger must show 0
duplicates and 0 silent losses. `bench/bench_chaos.py` runs a longer one and prints figures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.chaos import run_chaos
from tests.pg import fresh_pg_database

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")

SHORT: dict[str, Any] = {"rounds": 2, "burst": 5, "kill_within": 3.0}


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    ("platform", "backend"),
    [
        ("telegram", "sqlite"),
        pytest.param("telegram", "postgresql", marks=pytest.mark.postgres),
        ("slack", "sqlite"),
        ("whatsapp", "sqlite"),
        ("signal", "sqlite"),
        ("email", "sqlite"),
    ],
)
async def test_kill_minus_nine_loses_and_duplicates_nothing(
    platform: str, backend: str, tmp_path: Path
) -> None:
    if backend == "sqlite":
        report = await run_chaos(tmp_path, platform=platform, seed=12, **SHORT)
    else:
        async with fresh_pg_database() as url:
            report = await run_chaos(tmp_path, db_url=url, platform=platform, seed=12, **SHORT)
    assert report.kills == 2 and report.messages == 10
    assert report.problems == []
    assert (report.duplicates, report.losses, report.refused) == (0, 0, 0)
