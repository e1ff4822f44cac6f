"""Cron job rows on real SQLite and PostgreSQL: the claim is one conditional UPDATE, so a due
job is claimed once; history is capped at 20; claims of a dead process are released."""

from __future__ import annotations

from core.store import Store
from core.store import cron_store as cs
from core.store.cron_store import CronJobRecord


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
    assert await cs.insert_job(store, _job("due", 100))
    assert await cs.insert_job(store, _job("later", 500))
    assert await cs.insert_job(store, _job("off", 100, enabled=False))
    assert not await cs.insert_job(store, _job("due", 1))  # id taken
    assert await cs.earliest_due(store) == 100
    claimed = await cs.claim_due(store, 200)
    assert [(r.id, r.running_since, r.last_run_at) for r in claimed] == [("due", 200, 200)]
    assert await cs.claim_due(store, 300) == []  # running: never claimed twice
    assert await cs.claim_now(store, "due", 300) is None
    for i in range(25):
        await cs.finish_firing(
            store, "due", entry={"n": i}, status="ok", error=None, next_run_at=1000, remove=False
        )
    rec = await cs.get_job(store, "due")
    assert rec is not None and rec.running_since is None and rec.next_run_at == 1000
    assert rec.runs is not None and [r["n"] for r in rec.runs] == list(range(5, 25))
    manual = await cs.claim_now(store, "later", 300)
    assert manual is not None and manual.running_since == 300
    assert await cs.release_claims(store) == 1
    assert [r.id for r in await cs.claim_due(store, 600)] == ["later"]
    await cs.finish_firing(
        store, "later", entry={}, status="ok", error=None, next_run_at=None, remove=True
    )
    assert await cs.get_job(store, "later") is None
    assert await cs.delete_job(store, "due") and not await cs.delete_job(store, "due")
