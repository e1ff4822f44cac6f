"""Cron job rows on real SQLite and PostgreSQL: the claim is one conditional UPDATE, so a due
job is claimed once; history is capped at 20; claims of a dead process are released."""

from __future__ import annotations

from core.store import Store
from core.store.cron import CronJobRecord


def _job(job_id: str, next_run_at: int | None, *, enabled: bool = True) -> CronJobRecord:
    return CronJobRecord(
        id=job_id,
        agent_id="main",
        spec={"id": job_id, "every": "1m", "message": "m"},
        source="api",
        created_at=1,
        updated_at=1,
        enabled=enabled,
        next_run_at=next_run_at,
    )


async def test_claim_due_claims_each_due_job_once(store: Store) -> None:
    assert await store.insert_job(_job("due", 100))
    assert await store.insert_job(_job("later", 500))
    assert await store.insert_job(_job("off", 100, enabled=False))
    assert not await store.insert_job(_job("due", 1))  # id taken
    assert await store.earliest_due() == 100
    claimed = await store.claim_due(200)
    assert [(r.id, r.running_since, r.last_run_at) for r in claimed] == [("due", 200, 200)]
    assert await store.claim_due(300) == []  # running: never claimed twice
    assert await store.claim_now("due", 300) is None
    for i in range(25):
        await store.finish_firing(
            "due", entry={"n": i}, status="ok", error=None, next_run_at=1000, remove=False
        )
    rec = await store.get_job("due")
    assert rec is not None and rec.running_since is None and rec.next_run_at == 1000
    assert rec.runs is not None and [r["n"] for r in rec.runs] == list(range(5, 25))
    manual = await store.claim_now("later", 300)
    assert manual is not None and manual.running_since == 300
    assert await store.release_cron_claims() == 1
    assert [r.id for r in await store.claim_due(600)] == ["later"]
    await store.finish_firing(
        "later", entry={}, status="ok", error=None, next_run_at=None, remove=True
    )
    assert await store.get_job("later") is None
    assert await store.delete_job("due") and not await store.delete_job("due")


async def test_a_manual_run_cut_short_is_due_again_at_release(store: Store) -> None:
    """`cron run` of a job due an hour later, then a crash: the released claim left the job
    due only by its schedule, so the accepted run never happened and left no trace (D29 says a
    half-done firing happens again)."""
    assert await store.insert_job(_job("later", 3_600_000))
    assert await store.insert_job(_job("due", 100))
    assert await store.claim_now("later", 500) is not None
    assert [r.id for r in await store.claim_due(600)] == ["due"]
    assert await store.release_cron_claims() == 2
    assert await store.earliest_due() == 100
    assert sorted(r.id for r in await store.claim_due(700)) == ["due", "later"]
    later = await store.get_job("later")
    assert later is not None and later.next_run_at == 500  # its claim, not the next hour
