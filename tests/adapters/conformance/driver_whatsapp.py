"""The WhatsApp conformance driver: people on :class:`FakeWhatsApp`, the real gateway app.

Meta pushes webhooks to the gateway's own server, so the driver serves the real gateway
application (``build_app``) on a loopback test server and points the fake's ``webhook_url`` at
its ``/whatsapp/webhook``; a restart gets a new server and the fake follows it.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from aiohttp.test_utils import TestServer

from adapters.base import ChannelAdapter
from core.config.channel_registry import installed_channels
from core.engine.channels.build import ChannelEnv
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
from tests.fakes.whatsapp import FakeWhatsApp

TOKEN = "test-token"  # make_config's gateway token
ONE_TO_ONE = "the WhatsApp Business Cloud API carries one-to-one chats only"


def registry_build(rt: Runtime, channel: str) -> list[ChannelAdapter]:
    """The adapters of ``channels.<channel>`` exactly as the gateway builds them (D38)."""
    spec = installed_channels()[channel]
    section = getattr(rt.config.channels, channel)
    cls = spec.adapter_class()
    env = ChannelEnv(rt.state_dir, None)
    return [cls(account, account_id, env) for account_id, account in spec.account_configs(section)]


class HttpServed(FakeDriver):
    """A driver whose platform pushes to the gateway's HTTP server (webhooks)."""

    server: TestServer | None = None

    async def serve(self, rt: Runtime) -> str:
        from core.edge.http.server import build_app

        self.server = TestServer(build_app(rt, TOKEN, self.adapters))
        await self.server.start_server()
        return str(self.server.make_url("")).rstrip("/")

    async def stop(self) -> None:
        await super().stop()
        if self.server is not None:
            await self.server.close()
            self.server = None


def whatsapp_features(raw: str) -> set[Feature]:
    """What WhatsApp shows for its markup: *bold*, _italic_, ~strike~, `code`, ```mono```;
    a link is its text followed by the URL, which the app makes clickable."""
    out: set[Feature] = set()
    for m in re.finditer(r"```(.*?)```", raw, re.S):
        out.add(("pre", m.group(1).strip()))
    prose = re.sub(r"```.*?```", "", raw, flags=re.S)
    for m in re.finditer(r"`([^`\n]+)`", prose):
        out.add(("code", m.group(1)))
    prose = re.sub(r"`[^`\n]+`", "", prose)
    for m in re.finditer(r"(https?://[^\s)]+)", prose):
        out.add(("url", m.group(1)))
    for kind, mark in (("bold", "*"), ("italic", "_"), ("strikethrough", "~")):
        for m in re.finditer(
            rf"(?<![\w{re.escape(mark)}]){re.escape(mark)}([^{mark}\n]+)"
            rf"{re.escape(mark)}(?![\w{re.escape(mark)}])",
            prose,
        ):
            out.add((kind, m.group(1)))
    return out


class WhatsAppDriver(HttpServed):
    """The WhatsApp adapter (aiohttp on the Graph API) against :class:`FakeWhatsApp`."""

    platform = "whatsapp"
    USERS: ClassVar[dict[User, tuple[str, str]]] = {
        OWNER: ("4915100000001", "Ann"),
        STRANGER: ("4915100000007", "Mallory"),
        "stranger2": ("4915100000008", "Eve"),
        "stranger3": ("4915100000009", "Trent"),
        "stranger4": ("4915100000010", "Peggy"),
    }
    unsupported: ClassVar[dict[str, str]] = {
        "group": ONE_TO_ONE,
        "mention": ONE_TO_ONE,
        "thread": ONE_TO_ONE,
        "self": "the Cloud API reports the business's own messages only as statuses (ignored, "
        "tests/adapters/whatsapp/test_whatsapp_webhook.py) and has no bot accounts",
        "preview": "a business cannot edit its WhatsApp messages, so there is no live preview",
        "edit": "the Cloud API reports no edits of a person's message",
    }
    links_inline = True
    server_error = "retried"  # Graph's 503 means "not processed, try later" (D162)
    TYPING = "markRead"

    def __init__(self, fake: FakeWhatsApp) -> None:
        super().__init__()
        self.fake = self.wa = fake
        self.owner_id = self.USERS[OWNER][0]

    def config(self) -> dict[str, Any]:
        return {"channels": {"whatsapp": {**self.wa.config(), "owners": [self.owner_id]}}}

    def build(self, rt: Runtime) -> list[ChannelAdapter]:
        return registry_build(rt, "whatsapp")

    async def connected(self, rt: Runtime) -> None:
        self.wa.webhook_url = f"{await self.serve(rt)}/whatsapp/webhook"

    def user_id(self, user: User) -> str:
        return self.USERS[user][0]

    async def dm(self, text: str, *, user: User = OWNER) -> Reply:
        wa_id, name = self.USERS[user]
        self.last = self.wa.user_message(wa_id, text, name=name)
        return Reply(text, wa_id)

    async def redeliver_last(self) -> None:
        status, _ = await self.wa.redeliver(self.last)
        assert status == 200, status

    def fail_next_send(self, kind: SendFailure) -> None:
        if kind == "rate_limit":
            self.wa.fail_next("sendMessage", 429, retry_after=0.01)
        elif kind == "server_error":
            self.wa.fail_next("sendMessage", 503, retry_after=0.01)
        else:
            self.wa.fail_next(
                "sendMessage",
                403,
                {
                    "code": 10,
                    "message": "(#10) Application does not have permission for this action",
                },
            )

    def replies(self) -> list[Reply]:
        return [Reply(str(m["text"]), str(m["to"])) for m in self.wa.sent]

    media_out = True

    async def sent_media(self) -> list[SentMedia]:
        return [(str(m["kind"]), bytes(m["data"])) for m in self.wa.sent_media]

    def address(self, reply: Reply) -> str:
        return reply.chat

    def features(self, index: int) -> set[Feature]:
        return whatsapp_features(str(self.wa.sent[index]["text"]))
