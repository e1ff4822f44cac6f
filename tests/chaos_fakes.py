"""The fake side of the chaos run (tests/chaos.py): what the fake model answers, the people of
each fake platform (send a message, read what the bot posted), and the gateway's config."""

from __future__ import annotations

from collections import Counter
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path

import aiosmtplib

from tests.fakes.mailserver import MailServer
from tests.fakes.model import FakeModelServer
from tests.fakes.model_script import Reply, RequestJSON, content_text, text
from tests.fakes.signal import FakeSignal
from tests.fakes.slack import FakeSlack
from tests.fakes.telegram import FakeTelegram
from tests.fakes.whatsapp import FakeWhatsApp


def reply_for(said: str) -> str:
    """What the fake model answers: long (3 chunks, each line naming the message) for every
    fourth message, else a one-liner."""
    n = int(said[1:]) if said[1:].isdigit() else 0
    if n % 4 == 3:
        return "\n".join(
            f"{said} line {k:03d} " + "lorem ipsum dolor sit amet " * 3 for k in range(110)
        )
    return f"echo: {said}"


def responder(body: RequestJSON) -> Reply:
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    said = content_text(users[-1].get("content")).strip() if users else ""
    return text(reply_for(said))


Fake = FakeTelegram | FakeSlack | FakeWhatsApp | FakeSignal | MailServer
BOT_ADDRESS = "bot@example.org"


def _channel_yaml(fake: Fake) -> str:
    if isinstance(fake, FakeTelegram):
        return (
            "channels:\n  telegram:\n    dmPolicy: open\n    streaming: 'off'\n"
            f'    botToken: "{fake.token}"\n    apiBaseUrl: {fake.base_url}\n'
        )
    if isinstance(fake, FakeWhatsApp):
        return (
            "channels:\n  whatsapp:\n    dmPolicy: open\n"
            f'    phoneNumberId: "{fake.phone_number_id}"\n'
            f"    accessToken: {fake.token}\n    appSecret: {fake.app_secret}\n"
            f"    verifyToken: {fake.verify_token}\n    apiBaseUrl: {fake.api_base}\n"
        )
    if isinstance(fake, MailServer):  # plain IMAP/SMTP on loopback; IDLE, polled every 0.5s
        server = f"host: 127.0.0.1, username: {BOT_ADDRESS}, password: {fake.password}, tls: none"
        return (
            f"channels:\n  email:\n    dmPolicy: open\n    from: {BOT_ADDRESS}\n"
            f"    pollSeconds: 0.5\n    imap: {{{server}, port: {fake.imap_port}}}\n"
            f"    smtp: {{{server}, port: {fake.smtp_port}}}\n"
        )
    if isinstance(fake, FakeSignal):
        return (
            "channels:\n  signal:\n    dmPolicy: open\n"
            f'    account: "{fake.account}"\n    httpUrl: {fake.base_url}\n'
        )
    return (
        "channels:\n  slack:\n    dmPolicy: open\n    streaming: 'off'\n"
        f"    botToken: {fake.bot_token}\n    appToken: {fake.app_token}\n"
        f"    apiBaseUrl: {fake.base_url}\n"
    )


def write_config(
    path: Path, state: Path, model: FakeModelServer, fake: Fake, db_url: str | None
) -> Path:
    db = f"  database:\n    url: {db_url}\n" if db_url else ""
    path.write_text(
        "gateway:\n"
        f"  stateDir: {state}\n"
        "  auth:\n    token: e2e-token\n  reconcileAfterSeconds: 1\n"
        + db
        + "models:\n  providers:\n    fake:\n"
        f"      baseUrl: {model.base_url}\n      apiKey: test\n"
        "agents:\n  defaults:\n    model: fake/fake-model\n"
        # the people are guests, and a burst outruns a guest's 6 messages a minute (D64): such
        # messages are stored without a turn and refused visibly, which is not what this measures
        "limits:\n  guest: {}\n"
        "session:\n  dmScope: per-channel-peer\n" + _channel_yaml(fake),
        encoding="utf-8",
    )
    return path


class People:
    """The users of one fake platform: send a message, read what the bot posted."""

    def __init__(self, platform: str) -> None:
        self.platform = platform
        fakes: dict[str, type[Fake]] = {
            "telegram": FakeTelegram,
            "slack": FakeSlack,
            "whatsapp": FakeWhatsApp,
            "signal": FakeSignal,
            "email": MailServer,
        }
        self.fake: Fake = fakes[platform]()
        if isinstance(self.fake, FakeSlack):
            self.fake.redeliver_on_connect = True

    def listen_on(self, port: int) -> None:
        """Where the gateway under test listens (for platforms that push to it)."""
        if isinstance(self.fake, FakeWhatsApp):
            self.fake.webhook_url = f"http://127.0.0.1:{port}/whatsapp/webhook"

    async def say(self, chat: int, said: str) -> None:
        if isinstance(self.fake, FakeTelegram):
            self.fake.user_message(chat, said)
        elif isinstance(self.fake, FakeWhatsApp):
            self.fake.user_message(f"4915100000{chat}", said)
        elif isinstance(self.fake, FakeSignal):
            self.fake.user_message(f"+1555000{chat}", said)
        elif isinstance(self.fake, MailServer):  # a new mail; a kill may leave it unseen
            msg = EmailMessage()
            msg["From"], msg["To"] = f"user{chat}@example.org", BOT_ADDRESS
            msg["Message-ID"] = make_msgid(domain="example.org")
            msg.set_content(said)
            await aiosmtplib.send(
                msg, hostname="127.0.0.1", port=self.fake.smtp_port, start_tls=False
            )
        else:
            await self.fake.queue_event(
                self.fake.message_event(f"D0{chat}", said, user=f"U0{chat}")
            )

    def shown(self) -> Counter[tuple[str, str]]:
        """(chat, text with white space folded) of every message the bot posted, with how often:
        renderers may trim what a chunk ends with."""
        if isinstance(self.fake, FakeTelegram):
            return Counter(
                (str(c.params["chat_id"]), " ".join(str(c.params["text"]).split()))
                for c in self.fake.calls_for("sendMessage")
                if c.status == 200
            )
        if isinstance(self.fake, MailServer):
            return Counter(
                (str(m["To"]), " ".join(str(part.get_content()).split()))
                for m in self.fake.sent()
                if BOT_ADDRESS in str(m["From"]) and (part := m.get_body(("plain",)))
            )
        if isinstance(self.fake, FakeWhatsApp | FakeSignal):
            return Counter((str(m["to"]), " ".join(str(m["text"]).split())) for m in self.fake.sent)
        return Counter(
            (str(m["channel"]), " ".join(str(m["text"]).split())) for m in self.fake.posted
        )
