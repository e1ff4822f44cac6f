"""Linked identities (D65): one person behind accounts on several channels.

`/link` in a DM gives a code; `/link <CODE>` from another account (any channel) links the two;
`/unlink` takes the sender's account out. A person shares one DM session under `per-peer`,
counts once against limits (D64) and matches `person:` rules (D63); roles stay per account.
`session.identityLinks` in the config still works and shows in the same list.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from core.features.access.pairing import CODE_ALPHABET, CODE_LENGTH
from core.store import now_ms
from core.store.people import LinkCode

if TYPE_CHECKING:
    from core.config import CrosstalkConfig
    from core.model.inbound import InboundMessage
    from core.store import Store

LINK_TTL_MS = 10 * 60_000
MAX_WRONG_PER_HOUR = 5


def _code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


class Identities:
    def __init__(
        self, config: CrosstalkConfig, store: Store, clock: Callable[[], int] = now_ms
    ) -> None:
        self.store = store
        self.clock = clock
        self._configured: dict[str, str] = {}  # "<channel>:<userId>" → person (identityLinks)
        for person, ids in config.session.identity_links.items():
            for raw in ids:
                self._configured.setdefault(raw.strip().lower(), person)

    async def person_of(self, channel: str, user_id: str) -> str | None:
        linked = await self.store.person_of(channel, user_id)
        return linked or self._configured.get(f"{channel}:{user_id}".lower())

    async def start(self, msg: InboundMessage) -> str:
        code = _code()
        await self.store.add_link_code(
            LinkCode(code, msg.channel, msg.account_id, msg.sender_id, self.clock() + LINK_TTL_MS)
        )
        return (
            f"🔗 To link another account to this one, send /link {code} from it within 10 minutes."
        )

    async def complete(self, msg: InboundMessage, raw_code: str) -> str | None:
        """The answer to `/link <CODE>`; None past the wrong-code cap (no answer at all)."""
        code = raw_code.strip().upper()
        now = self.clock()
        sender = f"sender:{msg.channel}:{msg.sender_id}"
        window = f"h:{now // 3_600_000}"
        [wrong] = await self.store.counters([(sender, window, "linkfail")])
        if wrong >= MAX_WRONG_PER_HOUR:
            return None
        pending = await self.store.take_link_code(code, now)
        if pending is None or (pending.channel, pending.user_id) == (msg.channel, msg.sender_id):
            await self.store.bump([(sender, window, "linkfail", 1.0)])
            return f"🔗 No pending link with code {code}."
        await self.store.link(
            (pending.channel, pending.account_id, pending.user_id),
            (msg.channel, msg.account_id, msg.sender_id),
            now,
        )
        return (
            f"🔗 Linked: {pending.channel}:{pending.user_id} and {msg.channel}:{msg.sender_id} "
            "are now one person."
        )

    async def unlink(self, channel: str, user_id: str) -> bool:
        return await self.store.unlink(channel, user_id)

    async def persons(self) -> list[dict[str, Any]]:
        """`{personId, identities: [{channel, accountId, userId, linkedAt}]}`, the store's links
        and `session.identityLinks` (linkedAt null) in one list."""
        by_person: dict[str, list[dict[str, Any]]] = {}
        for link in await self.store.identities():
            by_person.setdefault(link.person_id, []).append(link.to_wire())
        for raw, person in self._configured.items():
            channel, _, user = raw.partition(":")
            if not user:
                continue
            entry = {"channel": channel, "accountId": "default", "userId": user, "linkedAt": None}
            by_person.setdefault(person, []).append(entry)
        return [{"personId": p, "identities": ids} for p, ids in by_person.items()]


__all__ = ["Identities"]
