"""The Matrix sync loop: the receiving side of the connection (D35), confirming like D16 asks.

Each ``/sync`` response is handled in full (invites answered per D11, new timeline events
handed to the router) before its ``next_batch`` is written to ``sync.json``: a crash in
between makes the next start sync again from the older token, and the router drops the
events it already has (their ``event_id``). An encrypted event whose room key has not come
yet waits (kept in ``sync.json`` too) and is retried as keys arrive; after
``UNDECRYPTABLE_AFTER`` seconds the person gets told it could not be read, never silence.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from nio import AsyncClient, InviteMemberEvent, MegolmEvent, SyncError, SyncResponse
from nio.exceptions import EncryptionError

from adapters.matrix.normalize import Me, normalize
from adapters.matrix.session import lock_down, read_json, write_private
from core.api.channels import InboundSink

log = logging.getLogger(__name__)

UNDECRYPTABLE_AFTER = 60.0
UNDECRYPTABLE_TEXT = "🔒 [an encrypted message this device could not decrypt]"


class SyncFailed(Exception):
    """The homeserver answered a sync with an error."""

    def __init__(self, resp: SyncError) -> None:
        super().__init__(f"sync failed: {resp.status_code or ''} {resp.message}".strip())
        self.status_code = resp.status_code


InviteDecision = Callable[[str, str, bool], Awaitable[bool]]
"""(room id, inviter, is_direct) → accept?"""


class SyncLoop:
    """Owns the cursor; :meth:`once` is one confirmed sync."""

    def __init__(
        self,
        client: AsyncClient,
        directory: Path,
        me: Me,
        *,
        accept_invite: InviteDecision,
        direct: dict[str, str],
        own_events: set[str],
        edits_start_turn: bool,
        on_direct: Callable[[str, str], Awaitable[None]],
    ) -> None:
        self.client = client
        self.directory = directory
        self.me = me
        self.accept_invite = accept_invite
        self.direct = direct
        self.own_events = own_events
        self.edits_start_turn = edits_start_turn
        self.on_direct = on_direct
        saved = read_json(directory / "sync.json") or {}
        self.since: str | None = saved.get("since") if isinstance(saved.get("since"), str) else None
        pending = saved.get("pending")
        self.pending: list[dict[str, Any]] = pending if isinstance(pending, list) else []
        self.last_receive_ms: int | None = None
        self.answered: set[str] = set()

    async def once(self, sink: InboundSink, timeout_ms: int) -> None:
        resp = await self.client.sync(timeout=timeout_ms, since=self.since)
        if isinstance(resp, SyncError):
            raise SyncFailed(resp)
        assert isinstance(resp, SyncResponse)
        self.last_receive_ms = int(time.time() * 1000)
        await keep_keys(self.client)
        await self._invites(resp)
        if self.since is not None:  # the first sync ever is the baseline: history stays
            await self._retry_pending(sink)
            await self._timeline(resp, sink)
        if resp.next_batch != self.since or self.pending:
            self.since = resp.next_batch
            write_private(
                self.directory / "sync.json", {"since": self.since, "pending": self.pending}
            )
            lock_down(self.directory)

    async def _invites(self, resp: SyncResponse) -> None:
        for room_id in (*resp.rooms.join, *resp.rooms.leave):
            self.answered.discard(room_id)  # a later invite is a new question
        for room_id, info in resp.rooms.invite.items():
            if room_id in self.answered:  # still listed until our answer is synced
                continue
            mine = [
                e
                for e in info.invite_state
                if isinstance(e, InviteMemberEvent)
                and e.state_key == self.me.user_id
                and e.membership == "invite"
            ]
            if not mine:
                continue
            invite = mine[-1]
            self.answered.add(room_id)
            direct = bool(invite.content.get("is_direct"))
            if await self.accept_invite(room_id, invite.sender, direct):
                joined = await self.client.join(room_id)
                log.info(
                    "matrix: joined %s (invited by %s): %s",
                    room_id,
                    invite.sender,
                    type(joined).__name__,
                )
                if direct and getattr(joined, "room_id", None):
                    await self.on_direct(room_id, invite.sender)
            else:
                await self.client.room_leave(room_id)
                log.info("matrix: declined the invite to %s from %s (D11)", room_id, invite.sender)

    async def _timeline(self, resp: SyncResponse, sink: InboundSink) -> None:
        for room_id, info in resp.rooms.join.items():
            events = list(info.timeline.events)
            joined_at = _my_join(events, self.me.user_id)
            for event in events[joined_at + 1 :] if joined_at is not None else events:
                if isinstance(event, MegolmEvent):  # nio could not decrypt it (yet)
                    again = self._decrypt(room_id, event.source)
                    if again is None:
                        self._park(room_id, event)
                        continue
                    event = again
                await self._hand(room_id, event.source, sink)

    def _decrypt(self, room_id: str, source: dict[str, Any]) -> Any | None:
        """The decrypted event, or None while its room key is missing."""
        megolm = MegolmEvent.from_dict(source)
        if not isinstance(megolm, MegolmEvent):
            return None
        megolm.room_id = room_id  # a sync timeline's events do not carry it
        try:
            decrypted = self.client.decrypt_event(megolm)
        except EncryptionError:
            return None
        return None if isinstance(decrypted, MegolmEvent) else decrypted

    def _park(self, room_id: str, event: MegolmEvent) -> None:
        log.info(
            "matrix: %s in %s cannot be decrypted yet; waiting for its key", event.event_id, room_id
        )
        self.pending.append({"room": room_id, "source": event.source, "since": time.time()})

    async def _retry_pending(self, sink: InboundSink) -> None:
        keep: list[dict[str, Any]] = []
        for item in self.pending:
            room_id, source = str(item["room"]), dict(item["source"])
            decrypted = self._decrypt(room_id, source)
            if decrypted is not None and not isinstance(decrypted, MegolmEvent):
                await self._hand(room_id, decrypted.source, sink)
            elif time.time() - float(item.get("since", 0)) > UNDECRYPTABLE_AFTER:
                await self._hand(
                    room_id,
                    {
                        **source,
                        "type": "m.room.message",
                        "content": {"msgtype": "m.text", "body": UNDECRYPTABLE_TEXT},
                    },
                    sink,
                )
            else:
                keep.append(item)
        self.pending = keep

    async def _hand(self, room_id: str, source: dict[str, Any], sink: InboundSink) -> None:
        room = self.client.rooms.get(room_id)
        msg = normalize(
            source,
            room_id=room_id,
            direct_peer=self.direct.get(room_id),
            room_name=room.display_name if room is not None else None,
            me=self.me,
            own_events=self.own_events,
            edits_start_turn=self.edits_start_turn,
        )
        if msg is not None:
            await sink(msg)


def _my_join(events: list[Any], user_id: str) -> int | None:
    """Index of the bot's own join in a timeline: what came before it is history."""
    found = None
    for i, event in enumerate(events):
        source = getattr(event, "source", {}) or {}
        if (
            source.get("type") == "m.room.member"
            and source.get("state_key") == user_id
            and (source.get("content") or {}).get("membership") == "join"
            and ((source.get("unsigned") or {}).get("prev_content") or {}).get("membership")
            != "join"
        ):
            found = i
    return found


async def keep_keys(client: AsyncClient) -> None:
    """What nio's own sync loop does between syncs: the keys that encryption needs."""
    if client.olm is None:
        return
    await client.send_to_device_messages()
    if client.should_upload_keys:
        await client.keys_upload()
    if client.should_query_keys:
        await client.keys_query()
    if client.should_claim_keys:
        await client.keys_claim(client.get_users_for_key_claiming())
