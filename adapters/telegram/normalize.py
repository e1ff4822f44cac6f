"""Telegram Message → InboundMessage, with no I/O.

Kept apart from the adapter so the chat/topic/mention rules can be read (and tested) on their
own: private chats are "direct" keyed by the peer's user id, groups and supergroups are "group"
keyed by the chat id, and a forum topic adds its thread id only when Telegram marks the message
as a topic message (a plain reply chain also carries ``message_thread_id``).
"""

from __future__ import annotations

from telegram import Message, MessageEntity

from core.delivery_context import DeliveryContext
from core.inbound import ChatType, InboundMessage

CHANNEL = "telegram"
_GROUP_TYPES = frozenset({"group", "supergroup"})


def message_text(message: Message) -> str | None:
    """Text of a message, or the caption of a media message; ``None`` when there is neither."""
    return message.text if message.text is not None else message.caption


def is_mentioned(message: Message, *, bot_id: int | None, bot_username: str | None) -> bool:
    """True when an entity addresses the bot: ``@username`` or a text_mention of its user."""
    wanted = f"@{bot_username}".lower() if bot_username else None
    parsed = {**message.parse_entities(), **message.parse_caption_entities()}
    for entity, value in parsed.items():
        if entity.type == MessageEntity.MENTION and wanted and value.lower() == wanted:
            return True
        if (entity.type == MessageEntity.TEXT_MENTION and entity.user is not None
                and bot_id is not None and entity.user.id == bot_id):
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

    Ignored: channels, messages without text, and messages from any bot (our own included).
    """
    text = message_text(message)
    sender = message.from_user
    chat = message.chat
    if text is None or sender is None or sender.is_bot:
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
        message_id=str(message.message_id),
        timestamp_ms=int(message.date.timestamp() * 1000),
        mentioned=is_mentioned(message, bot_id=bot_id, bot_username=bot_username),
        reply_to_bot=is_reply_to_bot(message, bot_id=bot_id),
        reply_to=DeliveryContext(channel=CHANNEL, to=to, account_id=account_id,
                                 thread_id=thread_id),
    )
