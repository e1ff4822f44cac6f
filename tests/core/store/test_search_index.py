"""The search index (D66): an existing database is indexed by the migration (every stored user
and assistant message), a new one from its first message, in the transaction that stores it."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Connection, insert, text

from core.model.search import SearchQuery
from core.store import SessionQuery, Store, TranscriptMessage
from core.store.engine import upgrade
from core.store.search import CANDIDATES
from core.store.search_index import TABLE
from core.store.tables import MessageRow, SessionRow
from tests.pg import fresh_pg_database

S = SessionRow.__table__  # type: ignore[attr-defined]
M = MessageRow.__table__  # type: ignore[attr-defined]


def _seed(c: Connection) -> None:
    c.execute(
        insert(S).values(
            key="agent:main:main",
            session_id="s-1",
            agent_id="main",
            kind="main",
            created_at=1,
            updated_at=1,
        )
    )
    rows = [
        ("user", "Où est le café?"),
        ("assistant", "Le café est fermé"),
        ("toolResult", "café in a tool result"),
    ] * 1500
    c.execute(
        insert(M),
        [
            {
                "session_key": "agent:main:main",
                "session_id": "s-1",
                "role": role,
                "content": [{"type": "text", "text": body}],
                "timestamp": i,
                "seq": i + 1,
            }
            for i, (role, body) in enumerate(rows)
        ],
    )


@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
)
async def test_migration_indexes_every_stored_message(backend: str, tmp_path: Path) -> None:
    async def check(url: str) -> None:
        await upgrade(url, "h26a")
        s = Store(url, tmp_path)
        try:
            await s.write(_seed)
            await s.open()  # the gateway's start runs the migration
            hits = await s.search_messages(SearchQuery.parse("CAFE"), SessionQuery(), limit=50)
            assert len(hits) == 50 and {h.message.role for h in hits} == {"user", "assistant"}
            # 1,500 user + 1,500 assistant, no tool results
            count = text(f"SELECT count(*) FROM {TABLE}")
            assert await s.read(lambda c: c.execute(count).scalar()) == 3000
            everything = await s.search_messages(
                SearchQuery.parse("cafe"), SessionQuery(), limit=10_000
            )
            assert len(everything) == CANDIDATES  # the newest 1,000 matches are ranked (D115)
            assert min(h.message.timestamp for h in everything) == 4500 - 1500
            entry = await s.get_session("agent:main:main")
            assert entry is not None
            await s.append_messages(entry, [TranscriptMessage.text("user", "un café", 9)])
            again = await s.search_messages(SearchQuery.parse("un"), SessionQuery(), limit=5)
            assert [h.message.timestamp for h in again] == [9]
        finally:
            await s.close()

    if backend == "sqlite":
        await check(f"sqlite+aiosqlite:///{tmp_path}/old.db")
    else:
        async with fresh_pg_database() as url:
            await check(url)
