"""A short, bounded chaos run (decision D16): a real gateway process SIGKILLed at random moments
during bursts of Telegram messages, on SQLite and PostgreSQL; the ledger must show 0
duplicates and 0 silent losses. `bench/bench_chaos.py` runs a longer one and prints figures."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.chaos import run_chaos
from tests.pg import fresh_pg_database

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")


@pytest.mark.timeout(300)
@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgresql",
                                                             marks=pytest.mark.postgres)])
async def test_kill_minus_nine_loses_and_duplicates_nothing(backend: str, tmp_path: Path
                                                            ) -> None:
    short = {"rounds": 2, "burst": 5, "seed": 12, "kill_within": 3.0}
    if backend == "sqlite":
        report = await run_chaos(tmp_path, **short)
    else:
        async with fresh_pg_database() as url:
            report = await run_chaos(tmp_path, db_url=url, **short)
    assert report.kills == 2 and report.messages == 10
    assert report.problems == []
    assert (report.duplicates, report.losses) == (0, 0)
