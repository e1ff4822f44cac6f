"""`sessions_at_route`: the sessions whose replies go to one chat (D140), on SQLite and
PostgreSQL."""

from __future__ import annotations

from typing import Any

from core.store import Store
from core.store.sessions import route_query


async def test_sessions_at_route_matches_channel_to_and_account(store: Store) -> None:
    rows = {
        "agent:main:tg:group:1": ("tg", "1", "default"),
        "agent:main:tg:group:1:topic:5": ("tg", "1", None),
        "agent:main:tg:group:2": ("tg", "2", "default"),
        "agent:main:dc:group:1": ("dc", "1", "default"),
        "agent:main:tg:other-account": ("tg", "1", "second"),
    }
    for key, (channel, to, account) in rows.items():
        await store.ensure_session(key, agent_id="main", kind="group")
        await store.update_session(key, last_channel=channel, last_to=to, last_account_id=account)
    found = await store.sessions_at_route("tg", "1", "default")
    assert [e.key for e in found] == ["agent:main:tg:group:1", "agent:main:tg:group:1:topic:5"]
    anywhere = await store.sessions_at_route("tg", "1")
    assert len(anywhere) == 3
    assert await store.sessions_at_route("tg", "9") == []


async def test_a_chats_sessions_are_found_by_index_not_by_reading_the_table(store: Store) -> None:
    """Every cron, hook, announce or tool delivery into another chat asks this (D140, D177):
    without `ix_sessions_route` (h28r) each one read the whole sessions table."""
    if store.dialect != "sqlite":
        return  # PostgreSQL's planner reads a table this small whole whatever the indexes
    q = route_query("tg", "1", "default", ("cron", "hook"))

    def plan(c: Any) -> str:
        sql = str(q.compile(c, compile_kwargs={"literal_binds": True}))
        return " ".join(str(row[-1]) for row in c.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}"))

    found = await store.read(plan)
    assert "USING INDEX ix_sessions_route" in found, found
