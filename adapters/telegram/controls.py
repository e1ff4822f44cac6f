"""Telegram's native buttons (D72, D121): an inline keyboard out, a callback query in.

A button's `callback_data` is the command it stands for (`/approve ABCD2345`, within
Telegram's 64 bytes); its press comes back as a callback query, which becomes an inbound
message with `button: true`, the query's id as its D16 identity and that command as its text.
"""

from __future__ import annotations

import logging
import re

from telegram import (
    BotCommand,
    BotCommandScopeChat,
    BotCommandScopeDefault,
    CallbackQuery,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
)
from telegram.error import TelegramError

from adapters.telegram.normalize import CHANNEL
from core.api.channels import Button, ChatType, CommandMenu, DeliveryContext, InboundMessage

log = logging.getLogger(__name__)
_NAME = re.compile(r"^[a-z0-9_]{1,32}$")

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


def _commands(pairs: tuple[tuple[str, str], ...]) -> list[BotCommand]:
    """Telegram takes lowercase names of 1-32 characters and descriptions of 1-256."""
    return [BotCommand(n, (d or n)[:256]) for n, d in pairs if _NAME.match(n)]


async def register_menu(bot: object, menu: CommandMenu) -> set[str]:
    """D74, by the connection holder at start: everyone's commands in the default scope, every
    command in each owner's private chat. Returns the owners whose scope Telegram took (it
    refuses the chat of someone who never wrote to the bot; they are registered when they do)."""
    await bot.set_my_commands(_commands(menu.everyone), scope=BotCommandScopeDefault())  # type: ignore[attr-defined]
    done: set[str] = set()
    for owner in menu.owner_ids:
        if await register_owner(bot, menu, owner):
            done.add(owner)
    return done


async def register_owner(bot: object, menu: CommandMenu, owner: str) -> bool:
    if not owner.lstrip("-").isdigit():
        return False
    try:
        await bot.set_my_commands(  # type: ignore[attr-defined]
            _commands(menu.every), scope=BotCommandScopeChat(int(owner))
        )
    except TelegramError as exc:
        log.info("telegram: owner %s's command menu waits for their first message (%s)", owner, exc)
        return False
    return True
