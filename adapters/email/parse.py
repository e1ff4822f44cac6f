"""One raw email → what Crosstalk needs of it, with no I/O (D171).

The thread is named by its root: the first ``References`` id, else ``In-Reply-To``, else the
message's own ``Message-ID``; every later reply in a conversation carries it, so the thread
is one session. The text is the plain part (else the HTML part as text) with the quoted
history a mail client appends cut off: the session already holds it. A new thread's subject
is part of the text. Mail that says it was sent by a machine (``Auto-Submitted``, bulk or
list ``Precedence``: vacation replies, bounces, other bots) is no turn, so two bots never
answer each other in a loop (RFC 3834).
"""

from __future__ import annotations

import email
import email.policy
import hashlib
import re
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import getaddresses, parsedate_to_datetime
from html.parser import HTMLParser

_ID = re.compile(r"<[^<>\s]+>")
_QUOTE_INTRO = re.compile(
    r"^(on .+ wrote:|.+ schrieb .+:|le .+ a écrit :|-----original message-----)$", re.IGNORECASE
)


@dataclass(frozen=True, slots=True)
class Part:
    """An attachment: its name, type and bytes."""

    name: str
    mime: str
    data: bytes


@dataclass(frozen=True, slots=True)
class Mail:
    message_id: str | None
    sender: str
    sender_name: str | None
    subject: str
    text: str
    in_reply_to: str | None
    references: tuple[str, ...]
    automatic: bool
    attachments: tuple[Part, ...]
    timestamp_ms: int | None

    @property
    def root(self) -> str | None:
        """The id of the thread's first message (None without any id at all)."""
        if self.references:
            return self.references[0]
        return self.in_reply_to or self.message_id

    @property
    def chain(self) -> tuple[str, ...]:
        """``References`` for a reply to this message."""
        refs = list(self.references)
        if self.in_reply_to and self.in_reply_to not in refs:
            refs.append(self.in_reply_to)
        if self.message_id:
            refs.append(self.message_id)
        return tuple(refs)


def thread_key(root: str) -> str:
    """A short, stable session suffix for a thread (its root id can be long)."""
    return hashlib.sha256(root.encode()).hexdigest()[:16]


def _ids(value: object) -> list[str]:
    return _ID.findall(str(value or ""))


def parse(raw: bytes) -> Mail:
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    assert isinstance(msg, EmailMessage)
    (name, address), *_ = getaddresses([str(msg.get("From", ""))]) or [("", "")]
    ids = _ids(msg.get("Message-ID"))
    reply_ids = _ids(msg.get("In-Reply-To"))
    refs = tuple(_ids(msg.get("References")))
    auto = str(msg.get("Auto-Submitted", "no")).strip().lower()
    precedence = str(msg.get("Precedence", "")).strip().lower()
    body = msg.get_body(preferencelist=("plain", "html"))
    text = ""
    if body is not None:
        content = body.get_content()
        text = str(content)
        if body.get_content_type() == "text/html":
            text = html_text(text)
    subject = " ".join(str(msg.get("Subject", "")).split())
    text = strip_quoted(text)
    if subject and not refs and not reply_ids:  # a new thread: what it is about
        text = f"Subject: {subject}\n\n{text}" if text else subject
    parts: list[Part] = []
    for part in msg.iter_attachments():
        data = part.get_payload(decode=True)
        if not isinstance(data, bytes):
            continue
        parts.append(Part(part.get_filename() or "attachment", part.get_content_type(), data))
    date = None
    try:
        date = (
            int(parsedate_to_datetime(str(msg["Date"])).timestamp() * 1000) if msg["Date"] else None
        )
    except (TypeError, ValueError):
        date = None
    return Mail(
        message_id=ids[0] if ids else None,
        sender=address.strip().lower(),
        sender_name=name.strip() or None,
        subject=subject,
        text=text.strip(),
        in_reply_to=reply_ids[0] if reply_ids else None,
        references=refs,
        automatic=auto != "no" or precedence in ("bulk", "list", "junk"),
        attachments=tuple(parts),
        timestamp_ms=date,
    )


def strip_quoted(text: str) -> str:
    """The new text of a reply: the trailing ``>`` block and its "On … wrote:" line go."""
    lines = text.replace("\r\n", "\n").split("\n")
    end = len(lines)
    while end > 0 and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith(">")):
        end -= 1
    if end < len(lines) and any(x.lstrip().startswith(">") for x in lines[end:]):
        if end > 0 and _QUOTE_INTRO.match(lines[end - 1].strip()):
            end -= 1
        lines = lines[:end]
    return "\n".join(lines).rstrip()


class _Text(HTMLParser):
    _BREAKS = frozenset({"br", "p", "div", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style", "head"):
            self._skip += 1
        elif tag in self._BREAKS:
            self.out.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "head") and self._skip:
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.out.append(data)


def html_text(html: str) -> str:
    parser = _Text()
    parser.feed(html)
    parser.close()
    return re.sub(r"\n{3,}", "\n\n", "".join(parser.out)).strip()
