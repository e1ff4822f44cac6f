"""Pairing rows on real SQLite and PostgreSQL: settle once, approvals persist, revoke."""

from __future__ import annotations

from core.store import Store
from tests.core.store.pairing_rows import request


async def test_request_lifecycle(store: Store) -> None:
    await store.add_request(request("AAAA2222", "7"))
    await store.add_request(request("BBBB3333", "8"))
    assert [r.code for r in await store.pending_requests(1050)] == ["AAAA2222", "BBBB3333"]
    assert await store.pending_requests(1100) == []  # expired at expires_at
    assert await store.settle_request("AAAA2222", 1050, "approved", "discord") is None
    approved = await store.settle_request("AAAA2222", 1050, "approved", "telegram")
    assert approved is not None and approved.user_id == "7"
    assert await store.settle_request("AAAA2222", 1050, "approved") is None  # only once
    assert await store.is_approved("telegram", "default", "7")
    assert not await store.is_approved("telegram", "other", "7")
    denied = await store.settle_request("BBBB3333", 1050, "denied")
    assert denied is not None
    still = await store.open_request("telegram", "default", "8", 1050)
    assert still is not None and still.status == "denied"  # holds back a new code
    assert not await store.is_approved("telegram", "default", "8")
    [a] = await store.approvals()
    assert a.to_wire() == {
        "channel": "telegram",
        "accountId": "default",
        "userId": "7",
        "approvedAt": 1050,
    }
    assert await store.revoke_approval("telegram", "7") == 1
    assert await store.revoke_approval("telegram", "7") == 0
    assert await store.approvals() == []


async def test_concurrent_settles_of_one_code_settle_it_once(store: Store) -> None:
    """Approve pressed twice (a double click, two owners in two chats) or Approve racing Deny:
    one wins. On PostgreSQL every concurrent call used to win, so the stranger was told
    "approved" once per press, and a losing Deny was reported done while the sender stayed
    approved."""
    import asyncio

    for i, verdicts in enumerate((["approved"] * 4, ["approved", "denied"] * 2)):
        code = f"CCCC{i}222"
        await store.add_request(request(code, f"9{i}"))
        results = await asyncio.gather(*(store.settle_request(code, 1050, v) for v in verdicts))
        won = [r for r in results if r is not None]
        assert len(won) == 1, [r and r.status for r in results]
        approved = await store.is_approved("telegram", "default", f"9{i}")
        assert approved == (won[0].status == "approved")
