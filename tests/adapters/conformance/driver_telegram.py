"""The Telegram conformance driver: people on :class:`FakeTelegram`, the real adapter
(python-telegram-bot long polling), built from config as the gateway builds it."""

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
)
from tests.fakes.telegram import FakeTelegram


class TelegramDriver(FakeDriver):
    """python-telegram-bot long polling against :class:`FakeTelegram`."""

    platform = "telegram"
    GROUP, FORUM, TOPIC = -100123, -100777, 7
    USERS: ClassVar[dict[User, tuple[int, str]]] = {
        OWNER: (42, "alice"),
        STRANGER: (7, "mallory"),
        "stranger2": (8, "eve"),
        "stranger3": (9, "trent"),
        "stranger4": (10, "peggy"),
    }

    def __init__(self, fake: FakeTelegram) -> None:
        super().__init__()
        self.fake = self.tg = fake
        self.owner_id = str(self.USERS[OWNER][0])

    def config(self) -> dict[str, Any]:
        return {
            "channels": {
                "telegram": {
                    "botToken": self.tg.token,
                    "apiBaseUrl": self.tg.base_url,
                    "owners": [self.owner_id],
                }
            }
        }

    def build(self, rt: Runtime) -> list[ChannelAdapter]:
        from adapters.telegram.adapter import TelegramAdapter, build

        section = rt.config.channels.telegram
        assert section is not None
        adapters = build(section, rt)
        for adapter in adapters:
            assert isinstance(adapter, TelegramAdapter)
            adapter.poll_timeout = 1  # the fake releases held polls on stop anyway
            adapter.retry_initial = 0.05
        return adapters

    def user_id(self, user: User) -> str:
        return str(self.USERS[user][0])

    @property
    def group_id(self) -> str:
        return str(self.GROUP)

    def _mention(self, text: str) -> str:
        return f"@{self.tg.bot_username} {text}"

    async def dm(self, text: str, *, user: User = OWNER) -> Reply:
        uid, name = self.USERS[user]
        self.last = self.tg.user_message(uid, text, username=name)
        return Reply(text, str(uid))

    async def redeliver_last(self) -> None:
        self.tg.redeliver(self.last)

    async def edit_last(self, text: str) -> None:
        self.tg.edit_message(self.last, text)

    async def group(self, text: str, *, mentioned: bool, user: User = OWNER) -> Reply:
        uid, name = self.USERS[user]
        said = self._mention(text) if mentioned else text
        self.tg.user_message(
            self.GROUP, said, chat_type="supergroup", user_id=uid, username=name, title="Team"
        )
        return Reply(said, str(self.GROUP))

    async def thread(self, text: str, *, user: User = OWNER) -> Reply:
        uid, name = self.USERS[user]
        said = self._mention(text)
        self.tg.user_message(
            self.FORUM,
            said,
            chat_type="supergroup",
            user_id=uid,
            username=name,
            thread_id=self.TOPIC,
            is_topic=True,
            title="Forum",
        )
        return Reply(said, str(self.FORUM), str(self.TOPIC))

    async def own_message(self, text: str, *, other_bot: bool = False) -> None:
        update = self.tg.user_message(self.USERS[OWNER][0], text, push=False)
        update["message"]["from"] = (
            {"id": 555, "is_bot": True, "first_name": "Other", "username": "other_bot"}
            if other_bot
            else self.tg.bot_user
        )
        self.tg.push_update(update)

    def fail_next_send(self, kind: SendFailure) -> None:
        if kind == "rate_limit":  # Telegram only ever asks for whole seconds
            self.tg.fail_next("sendMessage", 429, retry_after=1)
        elif kind == "server_error":
            self.tg.fail_next("sendMessage", 503)
        else:
            self.tg.fail_next("sendMessage", 403)

    def replies(self) -> list[Reply]:
        """The bot's messages as users see them (a streamed preview shows its final edit)."""
        return [
            Reply(
                str(m["text"]),
                str(m["chat_id"]),
                None if m["thread_id"] is None else str(m["thread_id"]),
            )
            for m in self.tg.visible()
        ]

    def address(self, reply: Reply) -> str:
        return reply.chat

    media_out = True

    async def sent_media(self) -> list[SentMedia]:
        return [(str(m["method"])[4:].lower(), bytes(m["data"])) for m in self.tg.media]

    TYPING, EDIT = "sendChatAction", "editMessageText"

    def features(self, index: int) -> set[Feature]:
        shown = self.tg.visible()[index]
        units = str(shown["text"]).encode("utf-16-le")
        out: set[Feature] = set()
        for e in shown["entities"]:
            piece = units[2 * e["offset"] : 2 * (e["offset"] + e["length"])].decode("utf-16-le")
            kind = {"text_link": "link"}.get(e["type"], e["type"])
            out.add((kind, piece.strip(), e["url"]) if kind == "link" else (kind, piece.strip()))
        return out
