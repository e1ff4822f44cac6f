"""The email channel beyond the conformance suite, against a real IMAP/SMTP server (D171,
D173): strangers refused without a reply by default, threads as sessions, threaded multipart
replies, attachments in, each TLS mode, polling without IDLE, a refused login."""

from __future__ import annotations

from email.message import EmailMessage
from typing import Any

import pytest

from adapters.email.adapter import EmailAdapter
from adapters.email.parse import parse, strip_quoted
from core.api.channels import ChannelEnv, ChannelUnavailable
from core.model.attachments import Attachment
from core.model.records import SessionQuery
from tests.adapters.email.mail import (
    BOT,
    OWNER,
    bot_mail,
    deliver,
    mail_from,
    section,
    start,
    text_of,
)
from tests.conftest import RuntimeFactory
from tests.fakes.mailserver import MailServer
from tests.fakes.model import FakeModelServer
from tests.polling import eventually

STRANGER = "mallory@example.org"


async def replies(mail: MailServer, count: int) -> list[EmailMessage]:
    async def enough() -> list[EmailMessage] | None:
        found = bot_mail(mail)
        return found if len(found) >= count else None

    return await eventually(enough)


async def test_a_stranger_is_refused_without_a_reply_by_default(
    make_runtime: RuntimeFactory, fake_email: MailServer, fake_model: FakeModelServer
) -> None:
    rt, adapter = await start(make_runtime, fake_email)
    assert rt.config.channels.email.dm_policy == "allowlist"
    await deliver(fake_email, mail_from(STRANGER, "let me in"))

    async def refused() -> bool:
        return rt.access.refused("email", "default") == 1

    await eventually(refused)
    await deliver(fake_email, mail_from("Alice@Example.org", "hello"))  # the owner, any case
    [reply] = await replies(fake_email, 1)
    assert reply["To"] == "alice@example.org"
    assert bot_mail(fake_email) == [reply]  # nothing ever went to the stranger
    assert await rt.access.pairing.pending() == []
    assert len(fake_model.requests) == 1
    await adapter.stop()


async def test_threads_are_sessions_and_replies_are_threaded_multipart(
    make_runtime: RuntimeFactory, fake_email: MailServer
) -> None:
    rt, adapter = await start(make_runtime, fake_email, **{"streaming": "off"})
    first = mail_from(OWNER, "plan the trip", subject="Trip")
    await deliver(fake_email, first)
    [r1] = await replies(fake_email, 1)
    assert r1["Subject"] == "Re: Trip" and r1["In-Reply-To"] == first["Message-ID"]
    assert r1["Auto-Submitted"] == "auto-replied"
    assert r1.get_content_type() == "multipart/alternative"
    plain = r1.get_body(("plain",))
    html = r1.get_body(("html",))
    assert plain is not None and html is not None
    assert text_of(r1) == "echo: Subject: Trip\n\nplan the trip"
    assert "<p>echo: Subject: Trip</p>" in html.get_content()
    # the owner answers the reply (quoting it, as mail clients do): the same thread
    follow = mail_from(
        OWNER,
        "and the hotel?\n\nOn Mon, Crosstalk wrote:\n> echo: plan\n",
        subject="Re: Trip",
        reply_to=r1,
    )
    await deliver(fake_email, follow)
    other = mail_from(OWNER, "something else", subject="Other")
    await deliver(fake_email, other)
    _, r2, r3 = await replies(fake_email, 3)
    assert {r2["In-Reply-To"], r3["In-Reply-To"]} == {follow["Message-ID"], other["Message-ID"]}
    threaded = r2 if r2["In-Reply-To"] == follow["Message-ID"] else r3
    assert str(threaded["References"]).split() == [
        first["Message-ID"],
        r1["Message-ID"],
        follow["Message-ID"],
    ]
    assert threaded["Subject"] == "Re: Trip"
    sessions = {e.key: e for e in await rt.store.list_sessions(SessionQuery())}
    assert len(sessions) == 2 and all(":thread:" in k for k in sessions)
    texts = {
        k: [m.plain_text() for m in await rt.store.history(e.session_id) if m.role == "user"]
        for k, e in sessions.items()
    }
    assert sorted(texts.values()) == sorted(
        [
            ["Subject: Trip\n\nplan the trip", "and the hotel?"],  # the quote was cut
            ["Subject: Other\n\nsomething else"],
        ]
    )
    await adapter.stop()


async def test_an_attachment_arrives_and_is_fetched(
    make_runtime: RuntimeFactory, fake_email: MailServer
) -> None:
    rt, adapter = await start(make_runtime, fake_email)
    msg = mail_from(OWNER, "see the picture")
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(200))
    msg.add_attachment(png, maintype="image", subtype="png", filename="cat.png")
    await deliver(fake_email, msg)
    await replies(fake_email, 1)
    [entry] = await rt.store.list_sessions(SessionQuery())
    [user] = [m for m in await rt.store.history(entry.session_id) if m.role == "user"]
    [part] = [p for p in user.content if p.get("type") == "attachment"]
    assert (part["kind"], part["name"], part["mime"], part["size"]) == (
        "image",
        "cat.png",
        "image/png",
        len(png),
    )
    assert await adapter.fetch_attachment(Attachment.from_part(part)) == png
    adapter._raw.clear()  # a restarted process: fetched again from the mailbox
    assert await adapter.fetch_attachment(Attachment.from_part(part)) == png
    await adapter.stop()


@pytest.mark.parametrize("mode", ["tls", "starttls", "poll"])
async def test_each_tls_mode_and_polling_without_idle(
    make_runtime: RuntimeFactory, fake_email: MailServer, mode: str
) -> None:
    ca = str(fake_email.cert)
    if mode == "tls":  # IMAPS (a TLS front on the IMAP port) and SMTPS
        over: dict[str, Any] = {
            "imap": {
                "host": "127.0.0.1",
                "port": await fake_email.tls_proxy(),
                "tls": "tls",
                "caFile": ca,
                "username": BOT,
                "password": fake_email.password,
            },
            "smtp": {
                "host": "127.0.0.1",
                "port": fake_email.smtps_port,
                "tls": "tls",
                "caFile": ca,
                "username": BOT,
                "password": fake_email.password,
            },
        }
    elif mode == "starttls":
        over = {
            "imap": {
                "host": "127.0.0.1",
                "port": fake_email.imap_port,
                "tls": "starttls",
                "caFile": ca,
                "username": BOT,
                "password": fake_email.password,
            },
            "smtp": {
                "host": "127.0.0.1",
                "port": fake_email.smtp_port,
                "tls": "starttls",
                "caFile": ca,
                "username": BOT,
                "password": fake_email.password,
            },
        }
    else:
        over = {"idle": False}
    _, adapter = await start(make_runtime, fake_email, **over)
    assert adapter.status().extra["mode"] == ("poll" if mode == "poll" else "idle")
    await deliver(fake_email, mail_from(OWNER, f"over {mode}"))
    [reply] = await replies(fake_email, 1)
    assert text_of(reply) == f"echo: over {mode}"
    await adapter.stop()


async def test_a_certificate_not_trusted_is_not_a_connection(
    make_runtime: RuntimeFactory, fake_email: MailServer
) -> None:
    """Without `caFile` the test server's own certificate is refused: TLS is verified."""
    over = {
        "imap": {
            "host": "127.0.0.1",
            "port": fake_email.imap_port,
            "tls": "starttls",
            "username": BOT,
            "password": fake_email.password,
        }
    }
    _, adapter = await start(make_runtime, fake_email, **over)
    assert adapter.status().state == "retrying"
    assert "CERTIFICATE_VERIFY_FAILED" in (adapter.status().detail or "")
    await adapter.stop()


async def test_a_refused_login_fails_the_channel(
    make_runtime: RuntimeFactory, fake_email: MailServer
) -> None:
    wrong = {
        "host": "127.0.0.1",
        "port": fake_email.imap_port,
        "tls": "none",
        "username": BOT,
        "password": "not the password",
    }
    rt = await make_runtime(section(fake_email, imap=wrong))
    adapter = EmailAdapter(rt.config.channels.email, "default", ChannelEnv(rt.state_dir))
    with pytest.raises(ChannelUnavailable, match="IMAP login refused"):
        await rt.add_adapter(adapter)
    assert adapter.status().state == "failed"
    await adapter.stop()


def test_parsing_threads_quotes_and_html() -> None:
    msg = EmailMessage()
    msg["From"] = "Bob <BOB@x.org>"
    msg["Message-ID"] = "<c@x>"
    msg["In-Reply-To"] = "<b@x>"
    msg["References"] = "<a@x> <b@x>"
    msg["Subject"] = "Re: plan"
    msg.set_content("<p>yes, <b>do</b> it</p><p>On Mon, Al wrote:</p>", subtype="html")
    mail = parse(msg.as_bytes())
    assert (mail.sender, mail.sender_name, mail.root) == ("bob@x.org", "Bob", "<a@x>")
    assert mail.chain == ("<a@x>", "<b@x>", "<c@x>")
    assert mail.text.startswith("yes, do it")  # a reply's subject is not repeated
    assert strip_quoted("ok\n\nOn Tue, X wrote:\n> a\n>b\n") == "ok"
    assert strip_quoted("> quoted first\nthen mine") == "> quoted first\nthen mine"
    auto = EmailMessage()
    auto["From"], auto["Auto-Submitted"] = "x@y", "auto-replied"
    auto.set_content("away")
    assert parse(auto.as_bytes()).automatic
