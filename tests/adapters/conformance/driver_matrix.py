"""The Matrix conformance driver: the real adapter against a real Synapse (D173).

The people are real matrix-nio clients with end-to-end encryption: a DM is an encrypted direct
room (as Element makes them), the test group a plain room. The adapter reaches Synapse through
:class:`MatrixProxy`, which records its requests and injects 429/403 answers; a redelivery is
the proxy answering a sync again with the earlier answer that carried the message.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from adapters.base import ChannelAdapter
from core.runtime import Runtime
from tests.adapters.conformance.drivers import (
    OWNER,
    FakeDriver,
    Feature,
    Reply,
    SendFailure,
    SentMedia,
    User,
)
from tests.adapters.conformance.html_features import html_features
from tests.fakes.matrix_people import MatrixPerson, Seen, media_of
from tests.fakes.matrix_proxy import MatrixProxy
from tests.fakes.synapse import Homeserver, MatrixUser
from tests.polling import eventually


class MatrixDriver(FakeDriver):
    platform = "matrix"
    unsupported: ClassVar[dict[str, str]] = {}
    server_error = "retried"  # the transaction id makes a resend safe: it is retried

    def __init__(self, proxy: MatrixProxy, store: Path) -> None:
        super().__init__()
        self.fake = self.proxy = proxy
        self.server: Homeserver = proxy.server
        self.store = store
        self.bot = self.server.register("bot")
        self.users: dict[str, MatrixUser] = {}
        self.people: dict[str, MatrixPerson] = {}
        self.dms: dict[str, str] = {}
        self.group_room: str | None = None
        self.group_members: set[str] = set()
        self.foreign: set[str] = set()  # the bot account's posts from another device
        self.asked: set[str] = set()  # rooms the bot was invited to since it (re)started
        self.owner_id = self._user(OWNER).user_id

    def _user(self, user: str) -> MatrixUser:
        if user not in self.users:
            self.users[user] = self.server.register(user.replace("stranger", "guest"))
        return self.users[user]

    async def start(self, make_runtime: Any, extra_config: dict[str, Any] | None = None) -> Runtime:
        self.asked = set()
        return await super().start(make_runtime, extra_config)

    def config(self) -> dict[str, Any]:
        return {
            "channels": {
                "matrix": {
                    "homeserver": self.proxy.base_url,
                    "userId": self.bot.user_id,
                    "password": self.bot.password,
                    "owners": [self.owner_id],
                }
            }
        }

    def build(self, rt: Runtime) -> list[ChannelAdapter]:
        from adapters.matrix.adapter import MatrixAdapter
        from core.api.channels import ChannelEnv

        section = rt.config.channels.matrix
        return [
            MatrixAdapter(
                section,
                "default",
                ChannelEnv(rt.state_dir),
                poll_timeout_ms=500,
                retry_initial=0.05,
            )
        ]

    async def close(self) -> None:
        await self.stop()
        for person in self.people.values():
            await person.stop()
        self.people = {}

    async def person(self, user: str) -> MatrixPerson:
        if user not in self.people:
            person = MatrixPerson(self.server, self._user(user), self.store / user)
            await person.start(watch=self.bot.user_id)
            self.people[user] = person
        return self.people[user]

    def user_id(self, user: User) -> str:
        return self._user(user).user_id

    async def _dm_room(self, user: str) -> str:
        if user not in self.dms:
            person = await self.person(user)
            self.dms[user] = await person.room(self.bot.user_id, direct=True, encrypted=True)
        return self.dms[user]

    async def _group(self, user: str) -> str:
        owner = await self.person(OWNER)
        if self.group_room is None:
            self.group_room = await owner.room(
                self.bot.user_id, direct=False, encrypted=False, name="Team"
            )
            self.asked.add(self.group_room)
            self.group_members.add(OWNER)
        room = self.group_room
        if owner.membership(room, self.bot.user_id) == "gone" and room not in self.asked:
            await owner.invite(room, self.bot.user_id)  # declined under the policy before
            self.asked.add(room)
        if user not in self.group_members:
            person = await self.person(user)
            await owner.client.room_invite(room, person.user_id)
            await person.client.join(room)
            await person.wait(lambda: room in person.client.rooms, what="joined the group")
            self.group_members.add(user)
        return room

    @property
    def group_id(self) -> str:
        assert self.group_room is not None, "post in the group first"
        return self.group_room

    # -- what people do -----------------------------------------------------------------------

    async def dm(self, text: str, *, user: User = OWNER) -> Reply:
        room = await self._dm_room(user)
        person = await self.person(user)
        event_id = await person.say(room, text)
        self.last = {"user": user, "room": room, "event_id": event_id}
        return Reply(text, room)

    async def redeliver_last(self) -> None:
        await self.proxy.wait_until(lambda: self._synced(self.last["event_id"]), 10)
        self.proxy.redeliver(self.last["event_id"])

    def _synced(self, event_id: str) -> bool:
        return any(event_id.encode() in body for body in self.proxy._syncs)

    async def edit_last(self, text: str) -> None:
        person = await self.person(self.last["user"])
        await person.say(
            self.last["room"],
            f"* {text}",
            content={
                "m.new_content": {"msgtype": "m.text", "body": text},
                "m.relates_to": {"rel_type": "m.replace", "event_id": self.last["event_id"]},
            },
        )

    def _mention(self, text: str) -> tuple[str, dict[str, Any]]:
        said = f"{self.bot.localpart}: {text}"
        return said, {"m.mentions": {"user_ids": [self.bot.user_id]}}

    async def group(self, text: str, *, mentioned: bool, user: User = OWNER) -> Reply:
        room = await self._group(user)
        person = await self.person(user)
        said, extra = self._mention(text) if mentioned else (text, {})
        await person.say(room, said, content=extra)
        return Reply(said, room)

    async def thread(self, text: str, *, user: User = OWNER) -> Reply:
        room = await self._group(user)
        person = await self.person(user)
        root = await person.say(room, "a thread starts here")
        said, extra = self._mention(text)
        await person.say(
            room,
            said,
            content={
                **extra,
                "m.relates_to": {
                    "rel_type": "m.thread",
                    "event_id": root,
                    "is_falling_back": True,
                    "m.in_reply_to": {"event_id": root},
                },
            },
        )
        return Reply(said, room, root)

    async def own_message(self, text: str, *, other_bot: bool = False) -> None:
        room = await self._dm_room(OWNER)
        owner = await self.person(OWNER)
        if other_bot:  # bots speak in m.notice
            other = await self.person("otherbot")
            await owner.client.room_invite(room, other.user_id)
            await other.client.join(room)
            await other.wait(lambda: room in other.client.rooms, what="joined the DM")
            await other.say(room, text, msgtype="m.notice")
        else:  # the bot's account on another device (a person's own client)
            me = MatrixPerson(self.server, self.bot, self.store / "bot-elsewhere")
            await me.start(watch="")
            try:
                await me.wait(lambda: room in me.client.rooms, what="bot sees its DM")
                self.foreign.add(await me.say(room, text))
            finally:
                await me.stop()

    def fail_next_send(self, kind: SendFailure) -> None:
        if kind == "rate_limit":
            self.proxy.fail_next("send", 429, retry_after=0.01)
        elif kind == "server_error":
            self.proxy.fail_next("send", 503)
        else:
            self.proxy.fail_next("send", 403)

    # -- what the bot did ---------------------------------------------------------------------

    def _seen(self) -> list[Seen]:
        out: dict[str, Seen] = {}
        for person in self.people.values():
            for s in person.seen:
                if s.event_id not in self.foreign and (
                    s.event_id not in out or s.edits > out[s.event_id].edits
                ):
                    out[s.event_id] = s  # the copy that has seen the most edits
        return sorted(out.values(), key=lambda s: int(s.sources[0].get("origin_server_ts", 0)))

    def _shown(self) -> bool:
        """Every event the bot sent (messages and edits) has reached a person's client."""
        sent = {
            c.params.get("_event_id")
            for c in self.proxy.calls
            if c.method == "send" and c.status == 200
        }
        seen = {
            str(src.get("event_id"))
            for p in self.people.values()
            for s in p.seen
            for src in s.sources
        }
        return sent <= seen

    async def wait_replies(self, count: int, timeout: float = 10.0) -> list[Reply]:
        async def done() -> bool:
            return len(self.replies()) >= count and self.rt.live.settled() and self._shown()

        await eventually(done, timeout, f"matrix: {count} replies")
        return self.replies()

    def replies(self) -> list[Reply]:
        return [Reply(s.body, s.room, s.thread) for s in self._seen()]

    def replies_seen(self) -> list[Seen]:
        """The bot's messages as people's clients show them (contents whole)."""
        return self._seen()

    media_out = True

    async def sent_media(self) -> list[SentMedia]:
        """Each file message, fetched and decrypted by a person's client as Element would."""
        return [(kind, data) for kind, data, _ in await media_of(self._seen(), self.people)]

    def address(self, reply: Reply) -> str:
        return reply.chat

    def features(self, index: int) -> set[Feature]:
        return html_features(str(self._seen()[index].content.get("formatted_body", "")))

    TYPING, EDIT = "typing", "edit"

    def edits(self) -> int:
        return sum(s.edits for s in self._seen())

    def typing_after_last_edit(self) -> int:
        names = [
            "edit" if c.method == "send" and _is_edit(c.params) else c.method
            for c in self.proxy.calls
            if c.status == 200
        ]
        last_edit = max((i for i, n in enumerate(names) if n == "edit"), default=-1)
        return names[last_edit + 1 :].count("typing")


def _is_edit(params: dict[str, Any]) -> bool:
    rel = params.get("m.relates_to") or {}
    return isinstance(rel, dict) and rel.get("rel_type") == "m.replace"
