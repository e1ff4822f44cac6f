"""People on the test homeserver: real matrix-nio clients (with end-to-end encryption).

A :class:`MatrixPerson` logs in as a registered user, keeps syncing in the background (so it
sees the bot join, shares room keys with the bot's device and decrypts what the bot sends) and
records every message the bot posts, edits applied, as a person's client would show it.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nio import (
    AsyncClient,
    AsyncClientConfig,
    DownloadError,
    LoginResponse,
    RoomCreateResponse,
    RoomSendResponse,
    SyncResponse,
)
from nio.crypto.attachments import decrypt_attachment

from tests.fakes.synapse import Homeserver, MatrixUser

ENCRYPTION = {
    "type": "m.room.encryption",
    "state_key": "",
    "content": {"algorithm": "m.megolm.v1.aes-sha2"},
}


@dataclass
class Seen:
    """A message the bot posted, as the person sees it (the latest edit wins)."""

    room: str
    event_id: str
    content: dict[str, Any]
    thread: str | None = None
    edits: int = 0
    sources: list[dict[str, Any]] = field(default_factory=list)

    @property
    def body(self) -> str:
        return str(self.content.get("body", ""))


class MatrixPerson:
    def __init__(self, server: Homeserver, user: MatrixUser, store: Path) -> None:
        self.server, self.user = server, user
        store.mkdir(parents=True, exist_ok=True)
        self.client = AsyncClient(
            server.base_url,
            user.user_id,
            store_path=str(store),
            config=AsyncClientConfig(encryption_enabled=True, store_sync_tokens=False),
        )
        self.seen: list[Seen] = []
        self.other: list[dict[str, Any]] = []  # events from anyone but the watched user
        self.watch: str = ""
        self.memberships: list[tuple[str, str, str]] = []  # (room, user, membership) seen
        self._task: asyncio.Task[None] | None = None
        self._changed = asyncio.Event()
        self._keys = asyncio.Lock()

    @property
    def user_id(self) -> str:
        return self.user.user_id

    async def start(self, watch: str) -> None:
        """Log in and sync in the background; record what `watch` (the bot) posts."""
        self.watch = watch
        resp = await self.client.login(self.user.password, device_name="test-person")
        assert isinstance(resp, LoginResponse), resp
        await self._sync(0)
        self._task = asyncio.create_task(self._loop())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        await self.client.close()

    async def _loop(self) -> None:
        while True:
            try:
                await self._sync(500)
            except asyncio.CancelledError:
                raise
            except Exception:
                await asyncio.sleep(0.1)

    async def _sync(self, timeout_ms: int) -> None:
        c = self.client
        resp = await c.sync(timeout=timeout_ms)
        if isinstance(resp, SyncResponse):
            for room_id, info in resp.rooms.join.items():
                for event in info.timeline.events:
                    self._record(room_id, event.source)
        async with self._keys:  # one key operation at a time, as nio's own loop does
            await c.send_to_device_messages()
            if c.should_upload_keys:
                await c.keys_upload()
            if c.should_query_keys:
                await c.keys_query()
            if c.should_claim_keys:
                await c.keys_claim(c.get_users_for_key_claiming())
        self._changed.set()
        self._changed = asyncio.Event()

    def _record(self, room_id: str, source: dict[str, Any]) -> None:
        if source.get("type") == "m.room.member":
            membership = (source.get("content") or {}).get("membership")
            self.memberships.append((room_id, str(source.get("state_key")), str(membership)))
            return
        if source.get("type") != "m.room.message":
            return
        content = source.get("content") or {}
        if source.get("sender") != self.watch:
            self.other.append(source)
            return
        rel = content.get("m.relates_to") or {}
        if rel.get("rel_type") == "m.replace":
            for s in self.seen:
                if s.event_id == rel.get("event_id"):
                    s.content = dict(content.get("m.new_content") or {})
                    s.edits += 1
                    s.sources.append(source)
            return
        thread = rel.get("event_id") if rel.get("rel_type") == "m.thread" else None
        self.seen.append(
            Seen(room_id, str(source["event_id"]), dict(content), thread, sources=[source])
        )

    async def wait(self, predicate: Any, timeout: float = 10.0, what: str = "condition") -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not predicate():
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise AssertionError(f"{self.user_id}: {what} not met in {timeout}s")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), remaining)

    async def room(
        self,
        bot: str,
        *,
        direct: bool,
        encrypted: bool,
        name: str | None = None,
        invite: list[str] | None = None,
    ) -> str:
        """A new room with the bot invited; returns once the bot has joined."""
        resp = await self.client.room_create(
            is_direct=direct,
            invite=[bot, *(invite or [])],
            name=name,
            initial_state=[ENCRYPTION] if encrypted else [],
        )
        assert isinstance(resp, RoomCreateResponse), resp
        room_id = resp.room_id
        await self.wait(
            lambda: self._answer(room_id, bot, 0) is not None,
            what=f"{bot} answered the invite to {room_id}",
        )
        return str(room_id)

    def _answer(self, room_id: str, user_id: str, since: int) -> str | None:
        """The first join or leave of `user_id` in `room_id` seen after `since` events."""
        for room, user, membership in self.memberships[since:]:
            if room == room_id and user == user_id and membership in ("join", "leave"):
                return membership
        return None

    def membership(self, room_id: str, user_id: str) -> str:
        """``join``, ``invite``, or ``gone`` (declined, left, never there)."""
        room = self.client.rooms.get(room_id)
        if room is None or user_id not in room.users:
            return "gone"
        return "invite" if user_id in room.invited_users else "join"

    async def invite(self, room_id: str, user_id: str) -> str:
        """Invite (again) and wait for the answer (join or leave); returns it."""
        seen = len(self.memberships)
        await self.client.room_invite(room_id, user_id)
        await self.wait(
            lambda: self._answer(room_id, user_id, seen) is not None,
            what=f"{user_id} answered the invite",
        )
        return str(self._answer(room_id, user_id, seen))

    async def say(
        self,
        room_id: str,
        text: str,
        *,
        content: dict[str, Any] | None = None,
        msgtype: str = "m.text",
    ) -> str:
        """Post a message (extra `content` merged in); returns its event id."""
        body = {"msgtype": msgtype, "body": text, **(content or {})}
        room = self.client.rooms.get(room_id)
        async with self._keys:
            if room is not None and room.encrypted and self.client.olm is not None:
                self.client.olm.update_tracked_users(room)  # every member's devices get it
                if self.client.should_query_keys:
                    await self.client.keys_query()
            resp = await self.client.room_send(
                room_id,
                "m.room.message",
                body,
                ignore_unverified_devices=True,
                tx_id=str(uuid.uuid4()),
            )
        assert isinstance(resp, RoomSendResponse), resp
        return str(resp.event_id)


_KINDS = {"m.image": "image", "m.audio": "audio", "m.video": "video", "m.file": "file"}


async def media_of(
    seen: list[Seen], people: dict[str, MatrixPerson]
) -> list[tuple[str, bytes, dict[str, Any]]]:
    """The files among `seen` messages: (kind, bytes, content), each downloaded by the person
    in its room and decrypted with the key its message carries (in an encrypted room)."""
    out = []
    for s in seen:
        kind = _KINDS.get(str(s.content.get("msgtype")))
        if kind is None:
            continue
        person = next(p for p in people.values() if s.room in p.client.rooms)
        file = s.content.get("file")
        url = str(file["url"] if isinstance(file, dict) else s.content.get("url"))
        resp = await person.client.download(mxc=url)
        assert not isinstance(resp, DownloadError), resp
        body = resp.body if isinstance(resp.body, bytes) else bytes(resp.body)
        if isinstance(file, dict):
            body = decrypt_attachment(body, file["key"]["k"], file["hashes"]["sha256"], file["iv"])
        out.append((kind, bytes(body), s.content))
    return out
