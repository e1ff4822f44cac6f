"""signal-cli envelopes → InboundMessage, with no I/O (D164).

A direct message is keyed by its sender (number, else ACI) and answered to the sender; a group
message is keyed by the group id and answered to ``group:<groupId>``. A message's identity
(D16) is its sender and its timestamp, which Signal uses as the message id. Mentions are
``U+FFFC`` placeholders in the text, replaced by ``@name``; a mention of the bot's own number (or
a quote of one of its messages) addresses the bot in a group. Ignored: the account's own and
synced messages, receipts, typing, reactions, deletions, timer updates and story replies.
"""

from __future__ import annotations

from typing import Any

from core.api.channels import (
    Attachment,
    ChatType,
    DeliveryContext,
    InboundMessage,
    kind_of_mime,
)

CHANNEL = "signal"
MENTION = "\ufffc"


def sender_of(envelope: dict[str, Any]) -> str | None:
    """The id people configure (``owners``, ``allowFrom``): the number, else the ACI."""
    value = envelope.get("sourceNumber") or envelope.get("sourceUuid") or envelope.get("source")
    return str(value) if value else None


def identity_of(envelope: dict[str, Any], timestamp: int) -> str:
    """``msg:<sender>:<timestamp>``: the ACI when known (it survives a number change)."""
    who = envelope.get("sourceUuid") or sender_of(envelope)
    return f"msg:{who}:{timestamp}"


def with_mentions(text: str, mentions: list[dict[str, Any]], bot: str) -> tuple[str, bool]:
    """The text with each placeholder as ``@name`` (offsets are UTF-16 units); and whether
    one of the mentions is the bot."""
    units = text.encode("utf-16-le")
    addressed = False
    ordered = sorted(
        (m for m in mentions if isinstance(m, dict)),
        key=lambda m: int(m.get("start") or 0),
        reverse=True,
    )
    for m in ordered:
        start, length = int(m.get("start") or 0), int(m.get("length") or 1)
        is_bot = bool(bot) and m.get("number") == bot
        addressed = addressed or is_bot
        name = str(bot if is_bot else m.get("name") or m.get("number") or m.get("uuid") or "")
        units = units[: start * 2] + f"@{name}".encode("utf-16-le") + units[(start + length) * 2 :]
    return units.decode("utf-16-le"), addressed


def attachments_of(data: dict[str, Any]) -> tuple[Attachment, ...]:
    out: list[Attachment] = []
    for a in data.get("attachments") or []:
        if not isinstance(a, dict) or not a.get("id"):
            continue
        mime = a.get("contentType")
        kind = kind_of_mime(mime)
        if kind == "audio" and not a.get("filename"):
            kind = "voice"  # a voice note has no file name
        out.append(
            Attachment(
                kind=kind,
                name=str(a.get("filename") or f"{kind}"),
                mime=mime,
                size=a.get("size"),
                file_id=str(a["id"]),
            )
        )
    return tuple(out)


def data_of(envelope: dict[str, Any], *, edits: bool) -> tuple[dict[str, Any], str | None] | None:
    """The message content of an envelope and, for an edit, its identity; None if no input."""
    if isinstance(envelope.get("dataMessage"), dict):
        return envelope["dataMessage"], None
    edit = envelope.get("editMessage")
    if edits and isinstance(edit, dict) and isinstance(edit.get("dataMessage"), dict):
        data = edit["dataMessage"]
        who = envelope.get("sourceUuid") or sender_of(envelope)
        return data, f"edit:{who}:{edit.get('targetSentTimestamp')}:{data.get('timestamp')}"
    return None


def to_inbound(
    envelope: dict[str, Any], *, account_id: str, bot: str, edits: bool = False
) -> InboundMessage | None:
    """One envelope as the router wants it; None for everything that is no user message."""
    sender = sender_of(envelope)
    found = data_of(envelope, edits=edits)
    if sender is None or found is None or sender == bot or envelope.get("sourceUuid") == bot:
        return None
    data, edit_identity = found
    if (
        data.get("reaction")
        or data.get("remoteDelete")
        or data.get("isExpirationUpdate")
        or data.get("storyContext")
    ):
        return None
    group = data.get("groupInfo") if isinstance(data.get("groupInfo"), dict) else None
    if group is not None and group.get("type", "DELIVER") != "DELIVER":
        return None  # a group update, not a message
    text, mentioned = with_mentions(
        str(data.get("message") or ""), list(data.get("mentions") or []), bot
    )
    attachments = attachments_of(data)
    if not text and not attachments:
        return None
    timestamp = int(data.get("timestamp") or envelope.get("timestamp") or 0)
    quote: dict[str, Any] = data["quote"] if isinstance(data.get("quote"), dict) else {}
    chat_type: ChatType = "group" if group is not None else "direct"
    chat_id = str(group["groupId"]) if group is not None else sender
    to = f"group:{chat_id}" if group is not None else sender
    return InboundMessage(
        channel=CHANNEL,
        account_id=account_id,
        chat_type=chat_type,
        chat_id=chat_id,
        sender_id=sender,
        sender_name=envelope.get("sourceName") or None,
        chat_title=group.get("groupName") if group is not None else None,
        text=text,
        attachments=attachments,
        message_id=str(timestamp),
        timestamp_ms=timestamp or None,
        mentioned=mentioned,
        reply_to_bot=bool(bot) and bot in (quote.get("authorNumber"), quote.get("author")),
        identities=(edit_identity or identity_of(envelope, timestamp),),
        reply_to=DeliveryContext(channel=CHANNEL, to=to, account_id=account_id),
    )
