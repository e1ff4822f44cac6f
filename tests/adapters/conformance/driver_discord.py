"""The Discord conformance driver: people on :class:`FakeDiscord`, the real adapter (discord.py's
gateway websocket and REST), built from config as the gateway builds it."""

from __future__ import annotations

from typing import Any, ClassVar

from adapters.base import ChannelAdapter
from core.runtime import Runtime
from tests.adapters.conformance.drivers import (
    OWNER,
    STRANGER,
    FakeDriver,
    Feature,
    Reply,
    SendFailure,
    SentMedia,
    User,
    shown_by_name,
)
from tests.adapters.conformance.markdown_features import markdown_features
from tests.fakes.discord import FakeDiscord


class DiscordDriver(FakeDriver):
    """discord.py (gateway websocket + REST) against :class:`FakeDiscord`."""

    platform = "discord"
    USERS: ClassVar[dict[User, tuple[int, str, int]]] = {
        OWNER: (800000000001, "alice", FakeDiscord.DM_CHANNEL_ID),
        STRANGER: (800000000002, "bob", FakeDiscord.DM_CHANNEL_ID + 1),
        "stranger2": (800000000003, "carol", FakeDiscord.DM_CHANNEL_ID + 2),
        "stranger3": (800000000004, "dave", FakeDiscord.DM_CHANNEL_ID + 3),
        "stranger4": (800000000005, "erin", FakeDiscord.DM_CHANNEL_ID + 4),
    }
    OTHER_BOT = 700000000001

    def __init__(self, fake: FakeDiscord) -> None:
        super().__init__()
        self.fake = self.dc = fake
        self.owner_id = str(self.USERS[OWNER][0])

    def config(self) -> dict[str, Any]:
        # the fake_discord fixture points discord.py's global endpoints at the fake
        return {"channels": {"discord": {"token": self.dc.token, "owners": [self.owner_id]}}}

    def build(self, rt: Runtime) -> list[ChannelAdapter]:
        from adapters.discord.adapter import build

        section = rt.config.channels.discord
        assert section is not None
        return build(section, rt, guild_ready_timeout=0.05, reconnect=False, start_timeout=5.0)

    def user_id(self, user: User) -> str:
        return str(self.USERS[user][0])

    @property
    def group_id(self) -> str:
        return str(self.dc.CHANNEL_ID)

    def _place(self, channel_id: int | str) -> tuple[str, str | None]:
        """Threads are channels on Discord: report them as (parent channel, thread)."""
        for guild in self.dc.guilds.values():
            for thread in guild["threads"]:
                if thread["id"] == str(channel_id):
                    return str(thread["parent_id"]), str(channel_id)
        return str(channel_id), None

    async def _post(
        self, channel_id: int, text: str, user: User, *, mentioned: bool = False
    ) -> Reply:
        uid, name, _ = self.USERS[user]
        payload = await self.dc.user_message(
            channel_id, text, author_id=uid, username=name, mentions_bot=mentioned
        )
        self.last = payload
        return Reply(str(payload["content"]), *self._place(channel_id))

    async def redeliver_last(self) -> None:
        await self.dc.wait_until(lambda: bool(self.dc.connections))  # after a restart
        await self.dc.redeliver(self.last)

    async def edit_last(self, text: str) -> None:
        await self.dc.message_update(self.last, text)

    async def dm(self, text: str, *, user: User = OWNER) -> Reply:
        return await self._post(self.USERS[user][2], text, user)

    async def group(self, text: str, *, mentioned: bool, user: User = OWNER) -> Reply:
        return await self._post(self.dc.CHANNEL_ID, text, user, mentioned=mentioned)

    async def thread(self, text: str, *, user: User = OWNER) -> Reply:
        return await self._post(self.dc.THREAD_ID, text, user, mentioned=True)

    async def own_message(self, text: str, *, other_bot: bool = False) -> None:
        dm = self.USERS[OWNER][2]
        if other_bot:
            await self.dc.user_message(
                dm, text, author_id=self.OTHER_BOT, username="otherbot", bot_author=True
            )
        else:  # (the fake also echoes every real reply back, as Discord does)
            await self.dc.dispatch(
                "MESSAGE_CREATE",
                self.dc.message_payload(dm, text, guild_id=None, author=self.dc.bot_user),
            )

    def fail_next_send(self, kind: SendFailure) -> None:
        if kind == "rate_limit":
            # discord.py itself waits out short 429s (five tries) before giving up; the gate's
            # retry is the one after that
            self.dc.fail_next("createMessage", 429, retry_after=0.01, times=5)
        elif kind == "server_error":
            self.dc.fail_next("createMessage", 503)
        else:
            self.dc.fail_next("createMessage", 403)

    def replies(self) -> list[Reply]:
        return [Reply(str(m["content"]), *self._place(m["channel_id"])) for m in self.dc.visible()]

    media_out = True

    async def sent_media(self) -> list[SentMedia]:
        """Discord shows an upload by its file name's type (images inline, audio a player)."""
        return shown_by_name(self.dc.uploads)

    def address(self, reply: Reply) -> str:
        return f"channel:{reply.chat}"

    TYPING, EDIT = "triggerTyping", "editMessage"

    def features(self, index: int) -> set[Feature]:
        return markdown_features(self.replies()[index].text)
