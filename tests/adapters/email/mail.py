"""Mail to and from the bot on the real IMAP/SMTP server (tests.fakes.mailserver): the email
channel's config section, a started adapter, a person's mail delivered, the bot's mail read."""

from __future__ import annotations

from email.message import EmailMessage
from email.utils import make_msgid
from typing import Any

import aiosmtplib

from adapters.email.adapter import EmailAdapter
from core.api.channels import ChannelEnv
from core.runtime import Runtime
from tests.conftest import RuntimeFactory
from tests.fakes.mailserver import MailServer

BOT, OWNER = "bot@example.org", "alice@example.org"


def section(mail: MailServer, **over: Any) -> dict[str, Any]:
    server = {"host": "127.0.0.1", "username": BOT, "password": mail.password, "tls": "none"}
    return {
        "channels": {
            "email": {
                "imap": {**server, "port": mail.imap_port},
                "smtp": {**server, "port": mail.smtp_port},
                "from": f"Crosstalk <{BOT}>",
                "owners": [OWNER],
                "pollSeconds": 0.2,
                **over,
            }
        }
    }


async def start(
    make_runtime: RuntimeFactory, mail: MailServer, **over: Any
) -> tuple[Runtime, EmailAdapter]:
    rt = await make_runtime(section(mail, **over))
    adapter = EmailAdapter(
        rt.config.channels.email, "default", ChannelEnv(rt.state_dir), retry_initial=0.05
    )
    await rt.add_adapter(adapter)
    return rt, adapter


def mail_from(
    sender: str, text: str, *, subject: str = "", reply_to: EmailMessage | None = None
) -> EmailMessage:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = sender, BOT, subject
    msg["Message-ID"] = make_msgid(domain="example.org")
    if reply_to is not None:
        refs = [*str(reply_to.get("References", "")).split(), str(reply_to["Message-ID"])]
        msg["In-Reply-To"], msg["References"] = str(reply_to["Message-ID"]), " ".join(refs)
    msg.set_content(text)
    return msg


async def deliver(mail: MailServer, msg: EmailMessage) -> None:
    await aiosmtplib.send(msg, hostname="127.0.0.1", port=mail.smtp_port, start_tls=False)


def text_of(msg: EmailMessage) -> str:
    part = msg.get_body(("plain",))
    assert part is not None
    return str(part.get_content()).replace("\r\n", "\n").strip()


def bot_mail(mail: MailServer) -> list[EmailMessage]:
    return [m for m in mail.sent() if BOT in str(m["From"])]
