"""The email tests' mail server (mail-devel, tests/fakes/mailserver.py): mail sent over SMTP
is read over IMAP, what it accepts is recorded, a refusal is one-shot, IMAPS works."""

from __future__ import annotations

from email.message import EmailMessage

import aioimaplib
import aiosmtplib
import pytest

from tests.fakes.mailserver import MailServer


def message(text: str, sender: str = "a@example.org", to: str = "b@example.org") -> EmailMessage:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = sender, to, "hi"
    msg.set_content(text)
    return msg


async def inbox_of(
    mail: MailServer, user: str, port: int | None = None, tls: bool = False
) -> list[bytes]:
    if tls:
        imap: aioimaplib.IMAP4 = aioimaplib.IMAP4_SSL(
            host="127.0.0.1", port=port, ssl_context=mail.client_tls, timeout=10
        )
    else:
        imap = aioimaplib.IMAP4(host="127.0.0.1", port=port or mail.imap_port, timeout=10)
    await imap.wait_hello_from_server()
    assert (await imap.login(user, mail.password)).result == "OK"
    await imap.select("INBOX")
    resp = await imap.uid("fetch", "1:*", "(BODY.PEEK[])")
    await imap.logout()
    return [bytes(x) for x in resp.lines if isinstance(x, bytearray)]


async def test_smtp_in_imap_out_and_recorded(fake_email: MailServer) -> None:
    await aiosmtplib.send(
        message("one"), hostname="127.0.0.1", port=fake_email.smtp_port, start_tls=False
    )
    [raw] = await inbox_of(fake_email, "b@example.org")
    assert b"one" in raw
    assert await inbox_of(fake_email, "a@example.org") == []  # a mailbox per address
    [sent] = fake_email.sent()
    assert sent["To"] == "b@example.org"


async def test_a_refusal_is_one_shot_and_for_its_sender(fake_email: MailServer) -> None:
    fake_email.refuse_next(451, sender="bot@example.org")
    await aiosmtplib.send(
        message("not the bot"), hostname="127.0.0.1", port=fake_email.smtp_port, start_tls=False
    )
    with pytest.raises(aiosmtplib.SMTPDataError) as refused:
        await aiosmtplib.send(
            message("x", sender="bot@example.org"),
            hostname="127.0.0.1",
            port=fake_email.smtp_port,
            start_tls=False,
        )
    assert refused.value.code == 451
    await aiosmtplib.send(
        message("y", sender="bot@example.org"),
        hostname="127.0.0.1",
        port=fake_email.smtp_port,
        start_tls=False,
    )
    assert [c.status for c in fake_email.calls_for("send")] == [250, 451, 250]


async def test_imaps_front_and_smtps(fake_email: MailServer) -> None:
    await aiosmtplib.send(
        message("secure"),
        hostname="127.0.0.1",
        port=fake_email.smtps_port,
        use_tls=True,
        tls_context=fake_email.client_tls,
    )
    port = await fake_email.tls_proxy()
    [raw] = await inbox_of(fake_email, "b@example.org", port=port, tls=True)
    assert b"secure" in raw
