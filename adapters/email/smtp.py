"""SMTP for the email channel: a reply as plain + HTML, threaded, and its errors (D171).

A reply is ``multipart/alternative``: the markdown as the plain part, its HTML rendering as
the other; a file is a MIME attachment after them (D159). ``In-Reply-To`` names the message
answered and ``References`` the whole chain, so every mail client files it in the thread.
``Auto-Submitted: auto-replied`` (RFC 3834) tells other robots not to answer it. A chunk's
``Message-ID`` is derived from its delivery and index: a resend after a crash (D16, reconcile
"resend") is the same message to the clients that de-duplicate by id.
"""

from __future__ import annotations

import hashlib
from email.message import EmailMessage
from email.utils import formatdate, make_msgid

import aiosmtplib

from adapters.email.imap import tls_context
from adapters.email.spec import MailServerConfig
from adapters.markup import markdown_html
from core.api.channels import (
    ChannelUnavailable,
    ChunkRef,
    DeliveryError,
    MediaItem,
    RateLimited,
    TargetForbidden,
    TargetNotFound,
    secret_value,
)

TIMEOUT = 30.0
_HTML = """<!DOCTYPE html>
<html><head><meta charset="utf-8"></head><body>
{body}
</body></html>
"""


def message_id(ref: ChunkRef | None, sender: str, to: str, text: str) -> str:
    domain = sender.rsplit("@", 1)[-1].strip("> ") or "crosstalk.invalid"
    if ref is None:
        return make_msgid(domain=domain)
    digest = hashlib.sha256(f"{to}\n{text}".encode()).hexdigest()[:12]
    return f"<ct.{ref.delivery_id}.{ref.index}.{digest}@{domain}>"


def compose(
    *,
    sender: str,
    to: str,
    subject: str,
    text: str,
    msg_id: str,
    in_reply_to: str | None,
    references: tuple[str, ...],
    attachment: MediaItem | None = None,
) -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = to
    msg["Subject"] = subject
    msg["Date"] = formatdate(localtime=False)
    msg["Message-ID"] = msg_id
    msg["Auto-Submitted"] = "auto-replied"
    if in_reply_to:
        msg["In-Reply-To"] = in_reply_to
    if references:
        msg["References"] = " ".join(references)
    msg.set_content(text)
    msg.add_alternative(_HTML.format(body=markdown_html(text)), subtype="html")
    if attachment is not None:  # multipart/mixed: the text, then the file (D159)
        maintype, _, subtype = attachment.mime.partition("/")
        msg.add_attachment(
            attachment.data,
            maintype=maintype if subtype else "application",
            subtype=subtype or "octet-stream",
            filename=attachment.name,
        )
    return msg


def reply_subject(subject: str) -> str:
    text = subject.strip()
    if not text:
        return "Re: your message"
    return text if text.lower().startswith("re:") else f"Re: {text}"


async def send(config: MailServerConfig, msg: EmailMessage, where: str) -> None:
    """Send one message; failures become the gate's typed delivery errors."""
    try:
        await aiosmtplib.send(
            msg,
            hostname=config.host,
            port=config.port_for("smtp"),
            username=config.username,
            password=secret_value(config.password),
            use_tls=config.tls == "tls",
            start_tls=config.tls == "starttls",
            tls_context=tls_context(config) if config.tls != "none" else None,
            timeout=TIMEOUT,
        )
    except aiosmtplib.SMTPRecipientsRefused as exc:
        codes = [r.code for r in exc.recipients]
        raise _by_code(min(codes) if codes else 550, str(exc), where) from exc
    except aiosmtplib.SMTPAuthenticationError as exc:
        raise ChannelUnavailable(f"{where}: SMTP login refused ({exc.code})") from exc
    except aiosmtplib.SMTPResponseException as exc:
        raise _by_code(exc.code, exc.message, where) from exc
    except (aiosmtplib.SMTPException, OSError, TimeoutError) as exc:
        raise ChannelUnavailable(f"{where}: {type(exc).__name__}: {exc}") from exc


def _by_code(code: int, text: str, where: str) -> DeliveryError:
    """4xx: try again later (the gate waits and retries); 5xx: refused for good."""
    detail = f"{where}: SMTP {code} {text}".strip()
    if 400 <= code < 500:
        return RateLimited(detail, 1.0)
    if code in (550, 551, 553) and "relay" not in text.lower() and "policy" not in text.lower():
        return TargetNotFound(detail)
    if code >= 500:
        return TargetForbidden(detail)
    return DeliveryError(detail)
