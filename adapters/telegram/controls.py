"""Telegram's native buttons (D72, D121): an inline keyboard out, a callback query in.

A button's `callback_data` is the command it stands for (`/approve ABCD2345`, within
Telegram's 64 bytes); its press comes back as a callback query, which becomes an inbound
message with `button: true`, the query's id as its D16 identity and that command as its text.
"""

from __future__ import annotations

from telegram import CallbackQuery, InlineKeyboardButton, InlineKeyboardMarkup

from adapters.telegram.normalize import CHANNEL
from core.api.channels import Button, ChatType, DeliveryContext, InboundMessage

CALLBACK_DATA_LIMIT = 64


def keyboard(buttons: tuple[Button, ...]) -> InlineKeyboardMarkup:
    """One row of buttons, each carrying its command as callback data."""
    row = [
        InlineKeyboardButton(
            b.label, callback_data=b.command.encode()[:CALLBACK_DATA_LIMIT].decode()
        )
        for b in buttons
    ]
    return InlineKeyboardMarkup([row])


def normalize_press(query: CallbackQuery, *, account_id: str) -> InboundMessage | None:
    """A button press as the router wants it; None for a press it cannot place."""
    message, data, user = query.message, query.data, query.from_user
    if message is None or not data or user is None or user.is_bot:
        return None
    chat = message.chat
    chat_type: ChatType
    if chat.type == "private":
        chat_type, chat_id = "direct", str(user.id)
    elif chat.type in ("group", "supergroup"):
        chat_type, chat_id = "group", str(chat.id)
    else:
        return None
    thread = getattr(message, "message_thread_id", None)
    thread_id = str(thread) if thread is not None and chat_type == "group" else None
    return InboundMessage(
        channel=CHANNEL,
        account_id=account_id,
        chat_type=chat_type,
        chat_id=chat_id,
        thread_id=thread_id,
        topic=thread_id is not None,
        sender_id=str(user.id),
        sender_name=user.full_name or user.username or None,
        text=data,
        button=True,
        mentioned=True,  # a press on the bot's own message addresses the bot
        reply_to=DeliveryContext(
            channel=CHANNEL, to=str(chat.id), account_id=account_id, thread_id=thread_id
        ),
        identities=(f"callback:{query.id}",),
    )
