"""A pending Telegram pairing request, as the pairing store tests write one."""

from __future__ import annotations

from core.store.pairing import PairingRequest


def request(
    code: str, user: str, *, now: int = 1000, account: str = "default", ttl: int = 100
) -> PairingRequest:
    """`user`'s DM asking to pair at `now`, pending for `ttl` ms."""
    return PairingRequest(
        code=code,
        channel="telegram",
        account_id=account,
        user_id=user,
        user_name=None,
        chat_id=user,
        thread_id=None,
        deliver_to=user,
        preview="hi",
        status="pending",
        created_at=now,
        expires_at=now + ttl,
    )
