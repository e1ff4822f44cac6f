"""The Signal conformance driver: people on :class:`FakeSignal` (a signal-cli daemon with its
event stream), the real adapter on aiohttp, built from config as the gateway builds it."""

from __future__ import annotations

import re
from typing import Any, ClassVar

from adapters.base import ChannelAdapter
from core.runtime import Runtime
from tests.adapters.conformance.driver_whatsapp import registry_build
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
from tests.fakes.signal import FakeSignal

_KIND = {"BOLD": "bold", "ITALIC": "italic", "STRIKETHROUGH": "strikethrough"}


def signal_features(text: str, styles: list[str]) -> set[Feature]:
    """What Signal shows: each style range of the text (offsets in UTF-16 units); a monospace
    range on lines of its own is a block, else inline code; URLs are linked by the app."""
    units = text.encode("utf-16-le")
    out: set[Feature] = set()
    for spec in styles:
        start, length, style = spec.split(":")
        a, n = int(start), int(length)
        piece = units[a * 2 : (a + n) * 2].decode("utf-16-le")
        if style == "MONOSPACE":
            before = units[: a * 2].decode("utf-16-le")
            after = units[(a + n) * 2 :].decode("utf-16-le")
            block = (not before or before.endswith("\n")) and (not after or after.startswith("\n"))
            out.add(("pre" if block else "code", piece.strip() if block else piece))
        elif style in _KIND:
            out.add((_KIND[style], piece))
    for m in re.finditer(r"(https?://[^\s)]+)", text):
        out.add(("url", m.group(1)))
    return out


class SignalDriver(FakeDriver):
    platform = "signal"
    GROUP = "VGVhbUdyb3VwSWQxMjM0NTY3ODkwQUJDREVGR0g="
    USERS: ClassVar[dict[User, tuple[str, str]]] = {
        OWNER: ("+15550000001", "Ann"),
        STRANGER: ("+15550000007", "Mallory"),
        "stranger2": ("+15550000008", "Eve"),
        "stranger3": ("+15550000009", "Trent"),
        "stranger4": ("+15550000010", "Peggy"),
    }
    unsupported: ClassVar[dict[str, str]] = {
        "thread": "Signal has no threads (a reply quotes a message in the same chat)",
        "self": "Signal has no bot accounts; the account's own messages come only as sync "
        "messages (ignored, tests/adapters/signal/test_signal.py)",
        "preview": "Signal clients cap the edits of a message, too few for a live preview",
    }
    links_inline = True
    server_error = "retried"  # HTTP 503 from the daemon: not processed, try later (D164)
    TYPING = "sendTyping"

    def __init__(self, fake: FakeSignal) -> None:
        super().__init__()
        self.fake = self.sg = fake
        self.owner_id = self.USERS[OWNER][0]

    def config(self) -> dict[str, Any]:
        return {"channels": {"signal": {**self.sg.config(), "owners": [self.owner_id]}}}

    def build(self, rt: Runtime) -> list[ChannelAdapter]:
        adapters = registry_build(rt, "signal")
        for adapter in adapters:
            adapter.retry_initial = 0.05  # type: ignore[attr-defined]
        return adapters

    async def connected(self, rt: Runtime) -> None:
        await self.sg.wait_until(lambda: bool(self.sg.streams))

    def user_id(self, user: User) -> str:
        return self.USERS[user][0]

    @property
    def group_id(self) -> str:
        return self.GROUP

    async def dm(self, text: str, *, user: User = OWNER) -> Reply:
        number, name = self.USERS[user]
        self.last = self.sg.user_message(number, text, name=name)
        return Reply(text, number)

    async def group(self, text: str, *, mentioned: bool, user: User = OWNER) -> Reply:
        number, name = self.USERS[user]
        if not mentioned:
            self.sg.user_message(number, text, name=name, group_id=self.GROUP)
            return Reply(text, self.GROUP)
        self.sg.user_message(
            number,
            f"\ufffc {text}",
            name=name,
            group_id=self.GROUP,
            mentions=[self.sg.mention_of_bot(0)],
        )
        return Reply(f"@{self.sg.account} {text}", self.GROUP)

    async def redeliver_last(self) -> None:
        await self.sg.wait_until(lambda: bool(self.sg.streams))  # after a restart
        self.sg.redeliver(self.last)

    async def edit_last(self, text: str) -> None:
        env = self.last["envelope"]
        ts = self.sg.timestamp()
        edited = {
            **env,
            "timestamp": ts,
            "dataMessage": None,
            "editMessage": {
                "targetSentTimestamp": env["dataMessage"]["timestamp"],
                "dataMessage": {**env["dataMessage"], "timestamp": ts, "message": text},
            },
        }
        del edited["dataMessage"]
        self.sg.push({"envelope": edited, "account": self.sg.account})

    def fail_next_send(self, kind: SendFailure) -> None:
        if kind == "rate_limit":
            self.sg.fail_next(
                "send",
                200,
                {
                    "result": {
                        "timestamp": 1,
                        "results": [
                            {
                                "recipientAddress": {"number": self.owner_id},
                                "type": "RATE_LIMIT_FAILURE",
                                "retryAfterSeconds": 0,
                            }
                        ],
                    }
                },
            )
        elif kind == "server_error":
            self.sg.fail_next("send", 503)
        else:
            self.sg.fail_next(
                "send",
                200,
                {
                    "result": {
                        "timestamp": 1,
                        "results": [
                            {
                                "recipientAddress": {"number": self.owner_id},
                                "type": "IDENTITY_FAILURE",
                            }
                        ],
                    }
                },
            )

    media_out = True

    async def sent_media(self) -> list[SentMedia]:
        return [(str(m["mime"]).split("/")[0], bytes(m["data"])) for m in self.sg.sent_media]

    def replies(self) -> list[Reply]:
        return [Reply(str(m["text"]), str(m["to"]).removeprefix("group:")) for m in self.sg.sent]

    def address(self, reply: Reply) -> str:
        return f"group:{reply.chat}" if reply.chat == self.GROUP else reply.chat

    def features(self, index: int) -> set[Feature]:
        sent = self.sg.sent[index]
        return signal_features(str(sent["text"]), list(sent["textStyle"]))
