"""The `subagent_runs` table: migration 0002 and the store functions, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from alembic import command
from sqlalchemy import inspect

from core.model.delivery_context import DeliveryContext
from core.store import Store
from core.store.engine import _alembic_config, upgrade
from core.store.subagents import (
    SubagentRecord,
)


def record(
    run_id: str,
    *,
    requester: str = "agent:main:main",
    created: int = 1_000,
    task: str = "do it",
    **kw: Any,
) -> SubagentRecord:
    return SubagentRecord(
        run_id=run_id,
        child_key=f"agent:main:subagent:{run_id}",
        requester_key=requester,
        task=task,
        created_at=created,
        **kw,
    )


async def tables(store: Store) -> set[str]:
    return set(await store.read(lambda c: inspect(c).get_table_names()))


async def test_migration_creates_the_table_and_downgrades(store: Store) -> None:
    assert "subagent_runs" in await tables(store)
    await asyncio.to_thread(command.downgrade, _alembic_config(store.url), "0001")
    assert "subagent_runs" not in await tables(store)
    assert "sessions" in await tables(store)
    await upgrade(store.url)
    assert "subagent_runs" in await tables(store)


async def test_roundtrip_with_origin_and_long_text(store: Store) -> None:
    origin = DeliveryContext(
        channel="slack", to="channel:C0AbC", account_id="acct", thread_id="1700000000.1"
    )
    rec = record(
        "r1",
        requester_origin=SubagentRecord.origin_json(origin),
        label="a label longer than sixty-four characters " * 3,
        task="t" * 10_000,
    )
    await store.insert_subagent_run(rec)
    got = await store.get_subagent_run("r1")
    assert got == rec
    assert got is not None and got.origin == origin and got.origin.to == "channel:C0AbC"
    assert await store.get_subagent_run("missing") is None


async def test_announce_claim_is_exclusive(store: Store) -> None:
    await store.insert_subagent_run(record("r1"))
    claims = await asyncio.gather(
        *(store.transition_announce("r1", ("pending",), "running") for _ in range(5))
    )
    assert claims.count(True) == 1
    assert await store.release_stale_claims() == 1
    got = await store.get_subagent_run("r1")
    assert got is not None and got.announce_state == "pending"
    assert await store.transition_announce("r1", ("pending",), "running")
    assert await store.transition_announce("r1", ("running",), "done", announced_at=5)
    got = await store.get_subagent_run("r1")
    assert got is not None and got.announce_state == "done" and got.announced_at == 5
    assert not await store.transition_announce("r1", ("pending",), "running")


async def test_lists_and_archive_due(store: Store) -> None:
    await store.insert_subagent_run(record("a", created=1, archive_at=100))
    await store.insert_subagent_run(
        record("b", created=2, archive_at=100, requester="agent:main:other")
    )
    await store.insert_subagent_run(record("c", created=3, archive_at=10_000))
    await store.insert_subagent_run(record("d", created=4, archive_at=None))
    assert [r.run_id for r in await store.list_subagent_runs(requester_key="agent:main:main")] == [
        "a",
        "c",
        "d",
    ]
    assert [r.run_id for r in await store.list_subagent_runs(unfinished=True)] == [
        "a",
        "b",
        "c",
        "d",
    ]
    # due only when finished and announced
    assert await store.due_for_archive(200) == []
    await store.update_subagent_run("a", outcome="ok", announce_state="done")
    await store.update_subagent_run("b", outcome="ok")
    await store.update_subagent_run("d", outcome="error", announce_state="skipped")
    assert [r.run_id for r in await store.due_for_archive(200)] == ["a"]
    assert [r.run_id for r in await store.list_subagent_runs(unfinished=True)] == ["c"]
    assert [r.run_id for r in await store.list_subagent_runs(announce_states=("pending",))] == [
        "b",
        "c",
    ]
    await store.delete_subagent_run("a")
    assert await store.get_subagent_run("a") is None
    with pytest.raises(ValueError, match="unknown subagent run fields"):
        await store.update_subagent_run("b", bogus=1)  # type: ignore[call-arg]
