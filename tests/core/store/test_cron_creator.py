"""The cron store's D81 parts on SQLite and PostgreSQL: agents' jobs counted in all, and a
creator's jobs disabled at once (the creator column added by migration h25a; its role and
person by h27c, D176)."""

from __future__ import annotations

from core.store import Store
from core.store.cron import CronJobRecord


def _job(job_id: str, source: str, creator: str | None) -> CronJobRecord:
    return CronJobRecord(
        id=job_id,
        agent_id="main",
        spec={"id": job_id, "every": "1h", "message": "x"},
        source=source,
        created_at=1,
        updated_at=1,
        creator=creator,
        creator_role="member" if creator else None,  # D176: the job's turns run as them
        creator_person="p-1" if creator else None,
        next_run_at=10,
    )


async def test_agent_jobs_are_counted_and_a_creators_jobs_disabled(store: Store) -> None:
    for rec in (
        _job("a", "agent", "telegram:guest"),
        _job("b", "agent", "telegram:guest"),
        _job("c", "agent", "telegram:other"),
        _job("d", "api", None),
    ):
        assert await store.insert_job(rec)
    assert await store.count_agent_jobs() == 3
    assert await store.disable_jobs_of("telegram:guest", 5, "revoked") == 2
    assert await store.disable_jobs_of("telegram:guest", 6, "revoked") == 0
    jobs = {j.id: j for j in await store.list_jobs()}
    assert [jobs[i].enabled for i in "abcd"] == [False, False, True, True]
    assert jobs["a"].last_error == "revoked" and jobs["a"].creator == "telegram:guest"
    assert (jobs["c"].creator_role, jobs["c"].creator_person, jobs["d"].creator_role) == (
        "member",
        "p-1",
        None,
    )
    assert [j.id for j in await store.claim_due(100)] == ["c", "d"]
