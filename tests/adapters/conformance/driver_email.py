"""The email conformance driver: the real adapter against a real IMAP/SMTP server.

People write mail to the bot over SMTP (each person keeps one conversation: every mail
answers the previous one, as a mail client's "reply" does) and read what the bot sent from
what the server accepted. A redelivery is the same mail appearing in the bot's inbox twice
(an IMAP APPEND of the same bytes, as a duplicate delivery looks). The suite's pairing tests
need ``dmPolicy: pairing``, set here; email's own default (``allowlist``, strangers refused
without a reply) has its own tests in ``tests/adapters/email/test_email.py``.
"""

from __future__ import annotations

import email.policy
from email.message import EmailMessage
from email.utils import make_msgid
from typing import Any, ClassVar

import aioimaplib
import aiosmtplib

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
from tests.fakes.mailserver import MailServer

BOT = "bot@example.org"
ADDRESSES = {
    OWNER: "alice@example.org",
    "stranger": "mallory@example.org",
    "stranger2": "eve@example.org",
    "stranger3": "trent@example.org",
    "stranger4": "peggy@example.org",
    "otherbot": "robot@example.org",
}


def html_of(msg: EmailMessage) -> str:
    part = msg.get_body(preferencelist=("html",))
    return str(part.get_content()) if part is not None else ""


def plain_of(msg: EmailMessage) -> str:
    part = msg.get_body(preferencelist=("plain",))
    return str(part.get_content()).replace("\r\n", "\n").rstrip("\n") if part else ""


class EmailDriver(FakeDriver):
    platform = "email"
    server_error = "retried"  # SMTP 4xx (421: service not available) means "try later"
    unsupported: ClassVar[dict[str, str]] = {
        "group": "email has no group chats (each mail is from one sender)",
        "mention": "email has no groups, so nothing to mention the bot in",
        "thread": "email threads are direct conversations (their own sessions), not threads "
        "inside a group",
        "preview": "a sent mail cannot be edited",
        "typing": "email has no typing indicator",
        "edit": "a sent mail cannot be edited",
    }

    def __init__(self, server: MailServer) -> None:
        super().__init__()
        self.fake = self.mail = server
        self.owner_id = ADDRESSES[OWNER]
        self.threads: dict[str, EmailMessage] = {}  # a person's last mail in their thread

    def config(self) -> dict[str, Any]:
        server = {
            "host": "127.0.0.1",
            "username": BOT,
            "password": self.mail.password,
            "tls": "starttls",
            "caFile": str(self.mail.cert),
        }
        return {
            "channels": {
                "email": {
                    "imap": {**server, "port": self.mail.imap_port},
                    "smtp": {**server, "port": self.mail.smtp_port},
                    "from": f"Crosstalk <{BOT}>",
                    "owners": [self.owner_id],
                    "dmPolicy": "pairing",
                    "pollSeconds": 0.2,
                }
            }
        }

    def build(self, rt: Runtime) -> list[ChannelAdapter]:
        from adapters.email.adapter import EmailAdapter
        from core.api.channels import ChannelEnv

        section = rt.config.channels.email
        return [EmailAdapter(section, "default", ChannelEnv(rt.state_dir), retry_initial=0.05)]

    def user_id(self, user: User) -> str:
        return ADDRESSES[user]

    async def wait_replies(self, count: int, timeout: float = 10.0) -> list[Reply]:
        return await super().wait_replies(count, timeout)

    def _mail(self, user: str, text: str, **headers: str) -> EmailMessage:
        msg = EmailMessage()
        msg["From"] = ADDRESSES[user]
        msg["To"] = BOT
        msg["Subject"] = ""
        msg["Message-ID"] = make_msgid(domain="example.org")
        earlier = self.threads.get(user)
        if earlier is not None:  # "reply" in the same conversation
            refs = [*str(earlier.get("References", "")).split(), str(earlier["Message-ID"])]
            msg["In-Reply-To"] = str(earlier["Message-ID"])
            msg["References"] = " ".join(refs)
        for name, value in headers.items():
            msg[name.replace("_", "-")] = value
        msg.set_content(text)
        return msg

    async def _deliver(self, msg: EmailMessage) -> None:
        await aiosmtplib.send(msg, hostname="127.0.0.1", port=self.mail.smtp_port, start_tls=False)

    async def dm(self, text: str, *, user: User = OWNER) -> Reply:
        msg = self._mail(user, text)
        self.threads[user] = msg
        await self._deliver(msg)
        self.last = {"raw": msg.as_bytes(policy=email.policy.SMTP)}
        return Reply(text, ADDRESSES[user])

    async def redeliver_last(self) -> None:
        """The same mail lands in the inbox once more (same Message-ID, a new UID)."""
        imap = aioimaplib.IMAP4(host="127.0.0.1", port=self.mail.imap_port, timeout=10)
        await imap.wait_hello_from_server()
        await imap.login(BOT, self.mail.password)
        resp = await imap.append(self.last["raw"], mailbox="INBOX")
        assert resp.result == "OK", resp
        await imap.logout()

    async def own_message(self, text: str, *, other_bot: bool = False) -> None:
        if other_bot:  # a vacation responder or another robot says so (RFC 3834)
            msg = self._mail("otherbot", text, Auto_Submitted="auto-replied")
        else:  # a copy of the bot's own mail
            msg = self._mail(OWNER, text)
            del msg["From"]
            msg["From"] = f"Crosstalk <{BOT}>"
        await self._deliver(msg)

    def fail_next_send(self, kind: SendFailure) -> None:
        code = {"rate_limit": 451, "server_error": 421}.get(kind, 550)
        self.mail.refuse_next(code, sender=BOT)

    def _sent(self) -> list[EmailMessage]:
        return [
            m
            for m in self.mail.sent()  # the bot's mail, not copies sent to itself
            if BOT in str(m.get("From", "")) and BOT not in str(m.get("To", ""))
        ]

    def replies(self) -> list[Reply]:
        return [Reply(plain_of(m), str(m["To"])) for m in self._sent()]

    media_out = True

    async def sent_media(self) -> list[SentMedia]:
        """Each file attached to the bot's mails: its MIME main type, its bytes."""
        return [
            (part.get_content_maintype(), bytes(part.get_payload(decode=True)))
            for m in self._sent()
            for part in m.iter_attachments()
        ]

    def address(self, reply: Reply) -> str:
        return reply.chat

    def features(self, index: int) -> set[Feature]:
        return html_features(html_of(self._sent()[index]))
