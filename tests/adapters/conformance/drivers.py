"""Platform drivers for the adapter conformance suite: one small class per channel, each in its
own module (``driver_<platform>.py``); here the interface they share and ``make_driver``.

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
import mimetypes
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

from adapters.base import ChannelAdapter
from core.runtime import Runtime
from tests.conftest import RuntimeFactory, deep_merge
from tests.fakes.base import EmulatorServer
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


def shown_by_name(uploads: list[dict[str, Any]]) -> list[SentMedia]:
    """Uploads as a platform that shows a file by its name's type shows them (Discord, Slack):
    images inline, audio a player, anything else a file."""
    kinds = {"image": "image", "audio": "audio"}
    out: list[SentMedia] = []
    for upload in uploads:
        mime = mimetypes.guess_type(str(upload["filename"]))[0] or ""
        out.append((kinds.get(mime.split("/")[0], "file"), bytes(upload["data"])))
    return out


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
        from tests.adapters.conformance.driver_telegram import TelegramDriver
        from tests.fakes.telegram import FakeTelegram

        assert isinstance(fake, FakeTelegram)
        return TelegramDriver(fake)
    if platform == "discord":
        from tests.adapters.conformance.driver_discord import DiscordDriver
        from tests.fakes.discord import FakeDiscord

        assert isinstance(fake, FakeDiscord)
        return DiscordDriver(fake)
    if platform == "slack":
        from tests.adapters.conformance.driver_slack import SlackDriver
        from tests.fakes.slack import FakeSlack

        assert isinstance(fake, FakeSlack)
        return SlackDriver(fake)
    if platform == "webchat":
        from tests.adapters.conformance.driver_webchat import WebchatDriver

        return WebchatDriver()
    if platform == "whatsapp":
        from tests.adapters.conformance.driver_whatsapp import WhatsAppDriver
        from tests.fakes.whatsapp import FakeWhatsApp

        assert isinstance(fake, FakeWhatsApp)
        return WhatsAppDriver(fake)
    if platform == "signal":
        from tests.adapters.conformance.driver_signal import SignalDriver
        from tests.fakes.signal import FakeSignal

        assert isinstance(fake, FakeSignal)
        return SignalDriver(fake)
    raise ValueError(f"no conformance driver for {platform!r}")
