"""A flood of strangers cannot lock pairing (D81), on SQLite and PostgreSQL: at the cap the
oldest pending request is dropped for the newcomer, each sender holds one, expired requests
go, so storage stays bounded."""

from __future__ import annotations

from sqlalchemy import func, select

from core.store import Store
from core.store.pairing import PairingRequest
from core.store.pairing_tables import PairingRequestRow
from tests.core.store.pairing_rows import request

HOUR = 3_600_000


def _req(user: str, at: int, account: str = "default") -> PairingRequest:
    return request(f"C{user}{at}"[:16], user, now=at, account=account, ttl=HOUR)


async def _rows(store: Store) -> int:
    table = PairingRequestRow.__table__  # type: ignore[attr-defined]
    q = select(func.count()).select_from(table)
    return int(await store.read(lambda c: c.execute(q).scalar_one()))


async def test_a_flood_drops_the_oldest_and_the_next_newcomer_gets_a_code(store: Store) -> None:
    for n in range(60):
        assert await store.add_request_once(_req(f"u{n}", 1000 + n), 50) is None
    pending = await store.pending_requests(2000)
    assert len(pending) == 50 and pending[0].user_id == "u10" and pending[-1].user_id == "u59"
    assert await store.add_request_once(_req("u59", 3000), 50) == "pairing request pending"
    assert await store.add_request_once(_req("late", 3000), 50) is None  # a newcomer: a code
    assert await store.add_request_once(_req("other", 3000, "second"), 50) is None
    assert len(await store.pending_requests(3000, account_id="default")) == 50
    assert await store.add_request_once(_req("later", 10 * HOUR), 50) is None  # all expired
    assert await _rows(store) == 2  # `other` (another account) and `later`
