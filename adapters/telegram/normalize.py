"""Telegram Message → InboundMessage, with no I/O.

Kept apart from the adapter so the chat/topic/mention rules can be read (and tested) on their
own: private chats are "direct" keyed by the peer's user id, groups and supergroups are "group"
keyed by the chat id, and a forum topic adds its thread id only when Telegram marks the message
as a topic message (a plain reply chain also carries ``message_thread_id``).
"""

from __future__ import annotations

from telegram import Message, MessageEntity

from core.api.channels import (
    Attachment,
    AttachmentKind,
    ChatType,
    DeliveryContext,
    InboundMessage,
    kind_of_mime,
)

CHANNEL = "telegram"
_GROUP_TYPES = frozenset({"group", "supergroup"})


def message_text(message: Message) -> str | None:
    """Text of a message, or the caption of a media message; ``None`` when there is neither."""
    return message.text if message.text is not None else message.caption


def attachments_of(message: Message) -> tuple[Attachment, ...]:
    """Photos, voice notes, audio, video and documents of a message (largest photo size)."""
    out: list[Attachment] = []
    if message.photo:
        p = message.photo[-1]
        out.append(
            Attachment(
                kind="image",
                name="photo.jpg",
                mime="image/jpeg",
                size=p.file_size,
                file_id=p.file_id,
            )
        )
    if message.voice is not None:
        v = message.voice
        out.append(
            Attachment(
                kind="voice",
                name="voice.ogg",
                mime=v.mime_type or "audio/ogg",
                size=v.file_size,
                file_id=v.file_id,
            )
        )
    media_kinds: tuple[tuple[object, AttachmentKind, str], ...] = (
        (message.audio, "audio", "audio"),
        (message.video, "video", "video.mp4"),
        (message.video_note, "video", "video_note.mp4"),
    )
    for media, kind, default in media_kinds:
        if media is not None:
            out.append(
                Attachment(
                    kind=kind,
                    name=getattr(media, "file_name", None) or default,
                    mime=getattr(media, "mime_type", None),
                    size=getattr(media, "file_size", None),
                    file_id=getattr(media, "file_id", None),
                )
            )
    if message.document is not None:
        d = message.document
        out.append(
            Attachment(
                kind=kind_of_mime(d.mime_type),
                name=d.file_name or "file",
                mime=d.mime_type,
                size=d.file_size,
                file_id=d.file_id,
            )
        )
    return tuple(out)


def is_mentioned(message: Message, *, bot_id: int | None, bot_username: str | None) -> bool:
    """True when an entity addresses the bot: ``@username`` or a text_mention of its user."""
    wanted = f"@{bot_username}".lower() if bot_username else None
    parsed = {**message.parse_entities(), **message.parse_caption_entities()}
    for entity, value in parsed.items():
        if entity.type == MessageEntity.MENTION and wanted and value.lower() == wanted:
            return True
        if (
            entity.type == MessageEntity.TEXT_MENTION
            and entity.user is not None
            and bot_id is not None
            and entity.user.id == bot_id
        ):
            return True
    return False


def is_reply_to_bot(message: Message, *, bot_id: int | None) -> bool:
    """True for a reply to one of the bot's messages.

    In forum topics every message "replies" to the topic's creation service message, which
    is not a reply to the bot even when the bot opened the topic, so that one is skipped.
    """
    parent = message.reply_to_message
    if parent is None or bot_id is None or parent.forum_topic_created is not None:
        return False
    return parent.from_user is not None and parent.from_user.id == bot_id


def normalize_message(
    message: Message,
    *,
    account_id: str,
    bot_id: int | None,
    bot_username: str | None,
) -> InboundMessage | None:
    """One user message as the router wants it; ``None`` for what Crosstalk ignores.

    Ignored: channels, messages with neither text nor an attachment, and messages from any bot
    (our own included).
    """
    text = message_text(message) or ""
    attachments = attachments_of(message)
    sender = message.from_user
    chat = message.chat
    if (not text and not attachments) or sender is None or sender.is_bot:
        return None
    if bot_id is not None and sender.id == bot_id:
        return None
    thread_id: str | None = None
    topic = False
    chat_type: ChatType
    if chat.type == "private":
        chat_type = "direct"
        chat_id = str(sender.id)
        to = str(chat.id)
    elif chat.type in _GROUP_TYPES:
        chat_type = "group"
        chat_id = to = str(chat.id)
        if message.is_topic_message and message.message_thread_id is not None:
            thread_id = str(message.message_thread_id)
            topic = True
    else:
        return None
    return InboundMessage(
        channel=CHANNEL,
        account_id=account_id,
        chat_type=chat_type,
        chat_id=chat_id,
        thread_id=thread_id,
        topic=topic,
        sender_id=str(sender.id),
        sender_name=sender.full_name or sender.username or None,
        chat_title=chat.title if chat_type == "group" else None,
        text=text,
        attachments=attachments,
        message_id=str(message.message_id),
        timestamp_ms=int(message.date.timestamp() * 1000),
        mentioned=is_mentioned(message, bot_id=bot_id, bot_username=bot_username),
        reply_to_bot=is_reply_to_bot(message, bot_id=bot_id),
        reply_to=DeliveryContext(
            channel=CHANNEL, to=to, account_id=account_id, thread_id=thread_id
        ),
    )
