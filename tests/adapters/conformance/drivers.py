"""Platform drivers for the adapter conformance suite: one small class per channel.

A driver plays the *people* of one platform: it injects their messages into the platform's
loopback fake (for the web chat: a real websocket client on the real gateway app) and reads
back what the bot sent. The adapter under test is the real one, built from config and started
on a real runtime, talking through the platform's real client library (python-telegram-bot,
discord.py, slack-bolt, aiohttp). Nothing of ours is mocked.

Every driver has the same interface, so each conformance test is written once:

* ``await start(make_runtime, extra_config)`` → the started :class:`Runtime`;
* ``await dm(text, user=OWNER)``, ``await group(text, mentioned=..., user=OWNER)``,
  ``await thread(text, user=OWNER)`` post as a person and return what was posted
  (a :class:`Reply`-shaped record: the text as the platform shows it, and where);
* ``await own_message(text, other_bot=False)`` posts as the bot itself (or another bot);
* ``await wait_replies(count, timeout)`` → every message the bot sent so far, oldest first;
* ``fail_next_send("rate_limit" | "forbidden" | "server_error")`` makes the platform refuse the
  next send (``server_error``: one HTTP 503, "try later"; ``server_error`` says what follows);
* ``address(reply)`` is the delivery-context ``to`` of the chat a reply went to;
* ``owner_id``, ``channel``, ``text_limit``; ``supports`` / ``unsupported`` say which
  capabilities the platform has (and why not), so tests skip with a reason.
"""

from __future__ import annotations

import abc
import asyncio
import json
import mimetypes
import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

import aiohttp
from aiohttp import WSMsgType
from aiohttp.test_utils import TestServer

from adapters.base import ChannelAdapter
from core.runtime import Runtime
from tests.conftest import RuntimeFactory, deep_merge
from tests.fakes.base import EmulatorServer
from tests.fakes.discord import FakeDiscord
from tests.fakes.slack import FakeSlack
from tests.fakes.telegram import FakeTelegram
from tests.polling import eventually

User = Literal["owner", "stranger", "stranger2", "stranger3", "stranger4"]
OWNER: User = "owner"
STRANGER: User = "stranger"
STRANGERS: tuple[User, ...] = ("stranger", "stranger2", "stranger3", "stranger4")
SendFailure = Literal["rate_limit", "forbidden", "server_error"]

#: Everything a conformance test may need from a platform.
CAPABILITIES = frozenset(
    {
        "group",  # multi-person chats
        "mention",  # groups answer only when the bot is addressed
        "thread",  # threads / forum topics inside a group
        "self",  # the bot's own (and other bots') messages arrive as events
        "strangers",  # people other than the owner can write to the bot
        "rate_limit",  # the platform API can answer a send with a rate limit
        "forbidden",  # ... or with "you may not post there"
        "server_error",  # ... or with a 503 ("unavailable, try later")
        "preview",  # a streamed reply is one message, posted early and edited in place
        "typing",  # a typing indicator while the agent works
        "edit",  # people can edit a message they sent
    }
)

#: A file the bot sent: (how the platform shows it: "photo", "voice", "file", ...; its bytes)
SentMedia = tuple[str, bytes]

#: A visible formatting feature: ("bold" | "italic" | "code" | "pre" | "link", text[, url]).
Feature = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Reply:
    """A message on the platform: its text and where it is (chat id, thread id or ``None``).

    Discord threads are channels of their own; they are reported as ``(parent, thread)`` so the
    shape is the same on every platform.
    """

    text: str
    chat: str
    thread: str | None = None

    @property
    def place(self) -> tuple[str, str | None]:
        return self.chat, self.thread


class Unsupported(NotImplementedError):
    """The platform has no such thing; tests check ``supports`` before calling."""


class Driver(abc.ABC):
    """The common interface; subclasses fill in the platform specifics."""

    platform: ClassVar[str]
    unsupported: ClassVar[dict[str, str]] = {}
    owner_id: str
    #: The platform has no link markup: a link shows as its text followed by the URL.
    links_inline: ClassVar[bool] = False
    #: What a one-off "unavailable, try later" (HTTP 503) on a send leads to: "retried" by the
    #: gate (every adapter raises ChannelUnavailable for a 5xx, D142) or "failed" (a platform
    #: where a resend could double the message: recorded, never sent twice).
    server_error: ClassVar[str] = "retried"
    #: The adapter sends media (D78) and `sent_media` reads them back.
    media_out: ClassVar[bool] = False

    def __init__(self) -> None:
        self._rt: Runtime | None = None
        self.adapters: list[ChannelAdapter] = []
        self.last: dict[str, Any] = {}  # what the platform sent for the last dm()

    # -- lifecycle --------------------------------------------------------------------------

    @property
    def channel(self) -> str:
        return self.platform

    @property
    def supports(self) -> frozenset[str]:
        return CAPABILITIES - set(self.unsupported)

    @property
    def rt(self) -> Runtime:
        assert self._rt is not None, "driver not started"
        return self._rt

    @property
    def text_limit(self) -> int:
        [adapter] = self.adapters
        return adapter.text_limit

    async def start(
        self, make_runtime: RuntimeFactory, extra_config: dict[str, Any] | None = None
    ) -> Runtime:
        """Start a runtime with this platform's config and its adapter, connected."""
        rt = await make_runtime(deep_merge(self.config(), extra_config or {}))
        await self.attach(rt)
        return rt

    async def attach(self, rt: Runtime) -> None:
        """Start this platform's adapters on a started runtime whose config has this driver's
        section (several platforms on one gateway: linked identities, D65)."""
        self._rt = rt
        for adapter in self.build(rt):
            self.adapters.append(adapter)
            await rt.add_adapter(adapter)
            assert adapter.status().state == "connected", adapter.status()
        await self.connected(rt)

    async def close(self) -> None:
        """The end of the test: everything the driver started (its people too)."""
        await self.stop()

    async def stop(self) -> None:
        """Disconnect before the fake goes away (adapters' stop is idempotent)."""
        for adapter in reversed(self.adapters):
            await adapter.stop()

    async def restart(
        self, make_runtime: RuntimeFactory, extra_config: dict[str, Any] | None = None
    ) -> Runtime:
        """Stop the adapter and the runtime, then start both again on the same database
        (a gateway restart); the platform fake keeps running."""
        await self.stop()
        await self.rt.stop()
        self.adapters = []
        return await self.start(make_runtime, extra_config)

    async def redeliver_last(self) -> None:
        """The platform delivers the last message a person sent once more (D16)."""
        raise Unsupported("redelivery")

    async def edit_last(self, text: str) -> None:
        """The person edits the last message they sent."""
        raise Unsupported(self.unsupported.get("edit", "edit"))

    @abc.abstractmethod
    def config(self) -> dict[str, Any]:
        """The config fragment for this platform (owner included)."""

    def user_id(self, user: User) -> str:
        """The platform user id of one of the driver's people (what `allowFrom` lists)."""
        raise Unsupported(self.unsupported.get("strangers", "strangers"))

    @property
    def group_id(self) -> str:
        """The id of the test group, as `groups.allow` names it."""
        raise Unsupported(self.unsupported.get("group", "group"))

    @abc.abstractmethod
    def build(self, rt: Runtime) -> list[ChannelAdapter]:
        """The adapters, built from the runtime's config the way the gateway builds them."""

    async def connected(self, rt: Runtime) -> None:
        """Hook: anything to do once the adapter is up (the web chat connects its client)."""
        return None

    # -- what people do ---------------------------------------------------------------------

    @abc.abstractmethod
    async def dm(self, text: str, *, user: User = OWNER) -> Reply:
        """A direct message from ``user``; returns what was posted and where."""

    async def group(self, text: str, *, mentioned: bool, user: User = OWNER) -> Reply:
        """A message in the platform's test group, addressing the bot or not."""
        raise Unsupported(self.unsupported.get("group", "group"))

    async def thread(self, text: str, *, user: User = OWNER) -> Reply:
        """A message addressing the bot inside a thread (forum topic) of a group."""
        raise Unsupported(self.unsupported.get("thread", "thread"))

    async def own_message(self, text: str, *, other_bot: bool = False) -> None:
        """A message from the bot itself (or another bot) in the owner's DM."""
        raise Unsupported(self.unsupported.get("self", "self"))

    def fail_next_send(self, kind: SendFailure) -> None:
        """Make the platform refuse the next send (one-shot, as the platform would)."""
        raise Unsupported(self.unsupported.get(kind, kind))

    # -- what the bot did -------------------------------------------------------------------

    @abc.abstractmethod
    def replies(self) -> list[Reply]:
        """Every message the platform accepted from the bot so far, oldest first."""

    @abc.abstractmethod
    async def wait_replies(self, count: int, timeout: float = 5.0) -> list[Reply]:
        """Wait (with a deadline) until at least ``count`` replies exist; return them all."""

    @abc.abstractmethod
    def address(self, reply: Reply) -> str:
        """The delivery-context ``to`` naming the chat ``reply`` went to."""

    @abc.abstractmethod
    def features(self, index: int) -> set[Feature]:
        """The formatting a user sees in the bot's message number ``index``."""

    async def sent_media(self) -> list[SentMedia]:
        """Every file the bot sent so far (D78): how the platform shows it, and its bytes."""
        raise Unsupported(f"{self.platform}: media are not sent here")

    async def wait_media(self, count: int, timeout: float = 10.0) -> list[SentMedia]:
        async def enough() -> list[SentMedia] | None:
            got = await self.sent_media()
            return got if len(got) >= count else None

        return await eventually(enough, timeout, f"{self.platform}: {count} media sent")


class FakeDriver(Driver):
    """A driver whose platform is one of the loopback fakes (:class:`EmulatorServer`)."""

    fake: EmulatorServer
    TYPING: ClassVar[str] = ""  # the fake's name for a typing call
    EDIT: ClassVar[str] = ""  # ... and for an edit of a sent message

    async def wait_visible(self, count: int, timeout: float = 5.0) -> list[Reply]:
        """Wait only for ``count`` messages on screen (a preview counts)."""
        await self.fake.wait_until(lambda: len(self.replies()) >= count, timeout)
        return self.replies()

    async def wait_typing(self, count: int, timeout: float = 5.0) -> None:
        await self.fake.wait_for(self.TYPING, count, timeout)

    def typing_count(self) -> int:
        return len(self.fake.calls_for(self.TYPING))

    def edits(self) -> int:
        return len([c for c in self.fake.calls_for(self.EDIT) if c.status == 200])

    def typing_after_last_edit(self) -> int:
        """Typing calls made after the last edit (the final reply): should be none."""
        names = [c.method for c in self.fake.calls]
        last_edit = max((i for i, n in enumerate(names) if n == self.EDIT), default=-1)
        return names[last_edit + 1 :].count(self.TYPING)

    async def wait_replies(self, count: int, timeout: float = 5.0) -> list[Reply]:
        """...and until no run is still streaming, so a preview is not taken for a reply."""

        async def done() -> bool:
            return len(self.replies()) >= count and self.rt.live.settled()

        await eventually(done, timeout, f"{self.platform}: {count} replies")
        return self.replies()


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
        kinds = {"image": "image", "audio": "audio"}
        out: list[SentMedia] = []
        for upload in self.dc.uploads:
            mime = mimetypes.guess_type(str(upload["filename"]))[0] or ""
            out.append((kinds.get(mime.split("/")[0], "file"), bytes(upload["data"])))
        return out

    def address(self, reply: Reply) -> str:
        return f"channel:{reply.chat}"

    TYPING, EDIT = "triggerTyping", "editMessage"

    def features(self, index: int) -> set[Feature]:
        return markdown_features(self.replies()[index].text)


class SlackDriver(FakeDriver):
    """slack-bolt in Socket Mode against :class:`FakeSlack`."""

    platform = "slack"
    GROUP, THREAD_CHANNEL, THREAD_TS = "C0CHAN001", "C0CHAN002", "1700000000.000100"
    USERS: ClassVar[dict[User, tuple[str, str]]] = {
        OWNER: ("U0OWNER01", "D0DMOWNER"),
        STRANGER: ("U0USER001", "D0DMUSER"),
        "stranger2": ("U0USER002", "D0DMUSER2"),
        "stranger3": ("U0USER003", "D0DMUSER3"),
        "stranger4": ("U0USER004", "D0DMUSER4"),
    }

    def __init__(self, fake: FakeSlack) -> None:
        super().__init__()
        self.fake = self.sl = fake
        self.owner_id = self.USERS[OWNER][0]

    def config(self) -> dict[str, Any]:
        return {
            "channels": {
                "slack": {
                    "botToken": self.sl.bot_token,
                    "appToken": self.sl.app_token,
                    "apiBaseUrl": self.sl.base_url,
                    "owners": [self.owner_id],
                }
            }
        }

    def build(self, rt: Runtime) -> list[ChannelAdapter]:
        from adapters.slack.adapter import build

        section = rt.config.channels.slack
        assert section is not None
        return build(section, rt)

    def user_id(self, user: User) -> str:
        return self.USERS[user][0]

    @property
    def group_id(self) -> str:
        return self.GROUP

    async def _mention(
        self, channel: str, text: str, user: User, thread_ts: str | None = None
    ) -> str:
        """A channel mention arrives twice, as ``message`` and ``app_mention`` (same ts)."""
        said, ts = f"<@{self.sl.bot_user_id}> {text}", self.sl.next_ts()
        uid = self.USERS[user][0]
        await self.sl.push_event(
            self.sl.message_event(
                channel, said, channel_type="channel", user=uid, ts=ts, thread_ts=thread_ts
            )
        )
        await self.sl.push_event(
            self.sl.app_mention(channel, said, user=uid, ts=ts, thread_ts=thread_ts)
        )
        return said

    async def dm(self, text: str, *, user: User = OWNER) -> Reply:
        uid, dm = self.USERS[user]
        self.last = self.sl.event_callback(self.sl.message_event(dm, text, user=uid))
        await self.sl.push_event(self.last)
        return Reply(text, dm)

    async def redeliver_last(self) -> None:
        """The same envelope payload (same ``event_id``), as a retry (``retry_attempt`` 1)."""
        await self.sl.push_event(self.last, retry_attempt=1)

    async def edit_last(self, text: str) -> None:
        original = self.last["event"]
        changed = self.sl.message_event(
            original["channel"], "", user=original["user"], subtype="message_changed"
        )
        del changed["user"], changed["text"]
        changed["message"] = {
            **original,
            "text": text,
            "edited": {"user": original["user"], "ts": self.sl.next_ts()},
        }
        changed["previous_message"] = original
        await self.sl.push_event(changed)

    async def group(self, text: str, *, mentioned: bool, user: User = OWNER) -> Reply:
        if mentioned:
            return Reply(await self._mention(self.GROUP, text, user), self.GROUP)
        await self.sl.push_event(
            self.sl.message_event(
                self.GROUP, text, channel_type="channel", user=self.USERS[user][0]
            )
        )
        return Reply(text, self.GROUP)

    async def thread(self, text: str, *, user: User = OWNER) -> Reply:
        said = await self._mention(self.THREAD_CHANNEL, text, user, self.THREAD_TS)
        return Reply(said, self.THREAD_CHANNEL, self.THREAD_TS)

    async def own_message(self, text: str, *, other_bot: bool = False) -> None:
        user, bot = (
            ("U0OTHERBOT", "B0OTHER") if other_bot else (self.sl.bot_user_id, self.sl.bot_id)
        )
        await self.sl.push_event(
            self.sl.message_event(self.USERS[OWNER][1], text, user=user, bot_id=bot)
        )

    def fail_next_send(self, kind: SendFailure) -> None:
        if kind == "rate_limit":  # HTTP 429 with Retry-After: 0
            self.sl.fail_next("chat.postMessage", 429, retry_after=0.01)
        elif kind == "server_error":
            self.sl.fail_next("chat.postMessage", 503)
        else:  # Slack answers API errors with HTTP 200 and ok: false
            self.sl.fail_next("chat.postMessage", 200, {"error": "not_in_channel"})

    def replies(self) -> list[Reply]:
        # `posted` holds only accepted messages (an injected ok:false is HTTP 200 as well);
        # the text as people read it: Slack shows its three escapes as the characters
        return [
            Reply(slack_shown(str(m["text"])), str(m["channel"]), m.get("thread_ts"))
            for m in self.sl.posted
        ]

    media_out = True

    async def sent_media(self) -> list[SentMedia]:
        """Slack shows a shared file by its type (images inline, audio a player)."""
        kinds = {"image": "image", "audio": "audio"}
        out: list[SentMedia] = []
        for upload in self.sl.uploads:
            mime = mimetypes.guess_type(str(upload["filename"]))[0] or ""
            out.append((kinds.get(mime.split("/")[0], "file"), bytes(upload["data"])))
        return out

    def address(self, reply: Reply) -> str:
        return f"channel:{reply.chat}"

    EDIT = "chat.update"
    unsupported: ClassVar[dict[str, str]] = {
        "typing": "Slack has no typing indicator for bots outside assistant threads"
    }

    def features(self, index: int) -> set[Feature]:
        raw = str(self.sl.posted[index]["text"])
        out: set[Feature] = set()
        for m in re.finditer(r"```\n(.*?)```", raw, re.S):
            out.add(("pre", slack_shown(m.group(1)).strip()))
        prose = re.sub(r"```\n.*?```", "", raw, flags=re.S)
        for m in re.finditer(r"`([^`\n]+)`", prose):
            out.add(("code", slack_shown(m.group(1))))
        prose = re.sub(r"`[^`\n]+`", "", prose)
        for m in re.finditer(r"<(https?://[^|>]+)\|([^>]+)>", prose):
            out.add(("link", slack_shown(m.group(2)), slack_shown(m.group(1))))
        for kind, mark in (("bold", "*"), ("italic", "_"), ("strikethrough", "~")):
            for m in re.finditer(
                rf"(?<!\w){re.escape(mark)}([^{mark}\n]+){re.escape(mark)}"
                rf"(?!\w)",
                prose,
            ):
                out.add((kind, slack_shown(m.group(1))))
        return out


def markdown_features(md: str) -> set[Feature]:
    """What a markdown renderer with HTML shown as text (Discord, the web chat) displays."""
    from markdown_it import MarkdownIt

    out: set[Feature] = set()
    tokens = MarkdownIt("commonmark", {"html": False}).enable("strikethrough").parse(md)
    for n, tok in enumerate(tokens):
        if tok.type == "heading_open":  # shown big and bold
            out.add(("bold", tokens[n + 1].content.strip()))
        if tok.type == "fence":
            out.add(
                ("pre", tok.content.strip(), tok.info) if tok.info else ("pre", tok.content.strip())
            )
        for i, child in enumerate(tok.children or []):
            if child.type == "code_inline":
                out.add(("code", child.content))
            elif child.type in ("strong_open", "em_open", "s_open", "link_open"):
                kind = {
                    "strong_open": "bold",
                    "em_open": "italic",
                    "s_open": "strikethrough",
                    "link_open": "link",
                }[child.type]
                children = tok.children or []
                text = children[i + 1].content if i + 1 < len(children) else ""
                out.add(
                    (kind, text, str(child.attrs.get("href", "")))
                    if kind == "link"
                    else (kind, text)
                )
    return out


def slack_shown(mrkdwn: str) -> str:
    return mrkdwn.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


class WebchatDriver(Driver):
    """The built-in web chat: the real gateway app on a test server, a websocket client."""

    platform = "webchat"
    TOKEN = "test-token"  # make_config's gateway.auth.token
    unsupported: ClassVar[dict[str, str]] = {
        "group": "the web chat has no groups (only the owner's main session)",
        "mention": "the web chat has no groups, so nothing to mention the bot in",
        "thread": "the web chat has no threads",
        "self": "the web chat's socket only carries the user's messages; no bot authors",
        "strangers": "the web chat's only user is the owner (whoever holds the gateway token)",
        "rate_limit": "the web chat pushes to its own websocket; no platform API to limit it",
        "forbidden": "the web chat pushes to its own websocket; nothing can refuse a send",
        "server_error": "the web chat pushes to its own websocket; no platform API to fail",
        "preview": "the web chat streams deltas over its socket (tests/adapters/webchat)",
        "typing": "the web chat shows its own progress from the delta frames",
        "edit": "the web chat has no message edits",
    }

    def __init__(self) -> None:
        super().__init__()
        self.owner_id = "owner"  # the default ?chat= peer
        self._server: TestServer | None = None
        self._http: aiohttp.ClientSession | None = None
        self._ws: aiohttp.ClientWebSocketResponse | None = None
        self._reader: asyncio.Task[None] | None = None
        self._replies: list[Reply] = []
        self._media: list[dict[str, Any]] = []  # "media" frames
        self._changed = asyncio.Event()

    def config(self) -> dict[str, Any]:
        return {}  # the web chat is on by default; its owners default to ["*"]

    media_out = True

    async def sent_media(self) -> list[SentMedia]:
        """Each item the page was told to show, fetched as the page fetches it (D78)."""
        assert self._http is not None and self._server is not None
        out: list[SentMedia] = []
        for item in self._media:
            url = self._server.make_url(f"/webchat/media/{item['id']}")
            auth = {"Authorization": f"Bearer {self.TOKEN}"}
            async with self._http.get(url, headers=auth) as resp:
                assert resp.status == 200, resp.status
                out.append((str(item["kind"]), await resp.read()))
        return out

    def build(self, rt: Runtime) -> list[ChannelAdapter]:
        from adapters.webchat.adapter import WebchatAdapter

        return [WebchatAdapter.for_gateway(rt.pages)]

    async def connected(self, rt: Runtime) -> None:
        from core.edge.http.server import build_app

        self._server = TestServer(build_app(rt, self.TOKEN, self.adapters))
        await self._server.start_server()
        self._http = aiohttp.ClientSession()
        self._ws = await self._http.ws_connect(self._server.make_url(f"/ws?token={self.TOKEN}"))
        first = json.loads((await self._ws.receive(timeout=5)).data)
        assert first["type"] == "history", first
        self._reader = asyncio.create_task(self._read(self._ws))

    async def _read(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        async for msg in ws:
            if msg.type != WSMsgType.TEXT:
                continue
            frame = json.loads(msg.data)
            if frame.get("type") == "message":  # "delta" frames are streaming previews
                self._replies.append(Reply(str(frame["text"]), self.owner_id))
                self._changed.set()
            elif frame.get("type") == "media":
                self._media.append(dict(frame["media"]))

    async def stop(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
        if self._ws is not None:
            await self._ws.close()
        if self._http is not None:
            await self._http.close()
        await super().stop()
        if self._server is not None:
            await self._server.close()

    async def dm(self, text: str, *, user: User = OWNER) -> Reply:
        if user != OWNER:
            raise Unsupported(self.unsupported["strangers"])
        assert self._ws is not None, "driver not started"
        self.last = {"type": "message", "text": text, "clientId": str(uuid.uuid4())}
        await self._ws.send_str(json.dumps(self.last))  # the page sends a clientId too
        return Reply(text, self.owner_id)

    async def redeliver_last(self) -> None:
        """The page sends the same frame again (e.g. after reconnecting)."""
        assert self._ws is not None, "driver not started"
        await self._ws.send_str(json.dumps(self.last))

    def replies(self) -> list[Reply]:
        return list(self._replies)

    async def wait_replies(self, count: int, timeout: float = 5.0) -> list[Reply]:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while len(self._replies) < count:
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise AssertionError(
                    f"webchat: expected {count} replies within {timeout}s, got {self.replies()}"
                )
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), remaining)
            except TimeoutError:
                pass
        return self.replies()

    def address(self, reply: Reply) -> str:
        return reply.chat

    def features(self, index: int) -> set[Feature]:
        return markdown_features(self._replies[index].text)  # rendered by the page's marked


PLATFORMS = ("telegram", "discord", "slack", "webchat", "whatsapp", "signal", "matrix", "email")


def make_driver(platform: str, fake: EmulatorServer | None, tmp: Path | None = None) -> Driver:
    """The driver of ``platform`` on its (already started) fake."""
    if platform == "matrix":
        from tests.adapters.conformance.driver_matrix import MatrixDriver
        from tests.fakes.matrix_proxy import MatrixProxy

        assert isinstance(fake, MatrixProxy) and tmp is not None
        return MatrixDriver(fake, tmp / "people")
    if platform == "email":
        from tests.adapters.conformance.driver_email import EmailDriver
        from tests.fakes.mailserver import MailServer

        assert isinstance(fake, MailServer)
        return EmailDriver(fake)
    if platform == "telegram":
        assert isinstance(fake, FakeTelegram)
        return TelegramDriver(fake)
    if platform == "discord":
        assert isinstance(fake, FakeDiscord)
        return DiscordDriver(fake)
    if platform == "slack":
        assert isinstance(fake, FakeSlack)
        return SlackDriver(fake)
    if platform == "webchat":
        return WebchatDriver()
    if platform == "whatsapp":
        from tests.adapters.conformance.drivers_whatsapp import WhatsAppDriver
        from tests.fakes.whatsapp import FakeWhatsApp

        assert isinstance(fake, FakeWhatsApp)
        return WhatsAppDriver(fake)
    if platform == "signal":
        from tests.adapters.conformance.drivers_signal import SignalDriver
        from tests.fakes.signal import FakeSignal

        assert isinstance(fake, FakeSignal)
        return SignalDriver(fake)
    raise ValueError(f"no conformance driver for {platform!r}")
