"""discord.py objects → Crosstalk shapes: inbound messages and delivery targets.

Kept free of connection state so the rules (which chats are direct, where a thread's replies go,
what counts as addressing the bot) live in one place and read like the spec.
"""

from __future__ import annotations

import discord

from core.api.channels import Attachment, ChatType, DeliveryContext, InboundMessage, kind_of_mime

CHANNEL = "discord"
# Ordinary user posts; joins, pins, boosts and other system messages never reach the agent.
_USER_TYPES = frozenset({discord.MessageType.default, discord.MessageType.reply})


def mention_patterns_for(bot_id: int | None) -> tuple[str, ...]:
    """How a Discord message addresses the bot in its raw text (`<@id>`, legacy `<@!id>`)."""
    return () if bot_id is None else (f"<@{bot_id}>", f"<@!{bot_id}>")


def format_to(channel_id: int) -> str:
    return f"channel:{channel_id}"


def parse_to(to: str | None) -> tuple[str, int]:
    """`channel:<id>` / `user:<id>` / bare `<id>` → (kind, snowflake); ValueError if malformed."""
    text = (to or "").strip()
    if text.startswith("discord:"):
        text = text.removeprefix("discord:")
    kind, sep, rest = text.partition(":")
    if not sep:
        kind, rest = "channel", text
    if kind not in ("channel", "user") or not rest.strip().isdigit():
        raise ValueError(f"not a Discord target: {to!r} (expected channel:<id> or user:<id>)")
    return kind, int(rest.strip())


def chat_of_target(to: str) -> str:
    """`discord:channel:123`, `123` → `channel:123`, as an event's route names the chat (D179)."""
    try:
        kind, snowflake = parse_to(to)
    except ValueError:
        return to.strip()
    return f"{kind}:{snowflake}"


def _is_mentioned(message: discord.Message, bot_id: int) -> bool:
    if any(user.id == bot_id for user in message.mentions):
        return True
    me = message.guild.me if message.guild is not None else None
    if me is None:
        return False
    # Mentioning the bot's own integration role is how many users address a bot.
    return any(role.is_bot_managed() and role in me.roles for role in message.role_mentions)


def _replies_to_bot(message: discord.Message, bot_id: int) -> bool:
    ref = message.reference
    if ref is None:
        return False
    resolved = ref.resolved if ref.resolved is not None else ref.cached_message
    return isinstance(resolved, discord.Message) and resolved.author.id == bot_id


def _text_of(message: discord.Message) -> str:
    return message.content or ""


def attachments_of(message: discord.Message) -> tuple[Attachment, ...]:
    """Uploaded files; the CDN URL is the handle the adapter fetches image bytes with."""
    return tuple(
        Attachment(
            kind="voice" if a.is_voice_message() else kind_of_mime(a.content_type),
            name=a.filename,
            mime=a.content_type,
            size=a.size,
            file_id=a.url,
        )
        for a in message.attachments
    )


def _chat_of(
    channel: discord.abc.Messageable | discord.abc.GuildChannel | discord.Thread | object,
    author_id: int,
) -> tuple[ChatType, int, int | None, int, str | None] | None:
    """(chat_type, chat_id, thread_id, post-to channel id, title), or None if unsupported."""
    if isinstance(channel, discord.DMChannel):
        return "direct", author_id, None, channel.id, None
    if isinstance(channel, discord.Thread):
        parent = channel.parent
        parent_name = f"#{parent.name}" if parent is not None else f"#{channel.parent_id}"
        title = f"{channel.guild.name} {parent_name} › {channel.name}"
        return "channel", channel.parent_id, channel.id, channel.parent_id, title
    if isinstance(channel, discord.abc.GuildChannel):
        return "channel", channel.id, None, channel.id, f"{channel.guild.name} #{channel.name}"
    return None


def to_inbound(message: discord.Message, *, bot_id: int, account_id: str) -> InboundMessage | None:
    """The InboundMessage for a user's post, or None for what the agent must never see.

    Dropped: the bot's own posts (the gateway echoes them), other bots and webhooks, system
    messages, group DMs, and posts without any text or attachment.
    """
    author = message.author
    if author.id == bot_id or author.bot or message.webhook_id is not None:
        return None
    if message.type not in _USER_TYPES:
        return None
    chat = _chat_of(message.channel, author.id)
    text = _text_of(message)
    attachments = attachments_of(message)
    if chat is None or (not text.strip() and not attachments):
        return None
    chat_type, chat_id, thread_id, post_to, title = chat
    return InboundMessage(
        channel=CHANNEL,
        account_id=account_id,
        chat_type=chat_type,
        chat_id=str(chat_id),
        thread_id=str(thread_id) if thread_id is not None else None,
        sender_id=str(author.id),
        sender_name=author.display_name,
        chat_title=title,
        text=text,
        attachments=attachments,
        message_id=str(message.id),
        timestamp_ms=int(message.created_at.timestamp() * 1000),
        mentioned=_is_mentioned(message, bot_id),
        reply_to_bot=_replies_to_bot(message, bot_id),
        reply_to=DeliveryContext(
            channel=CHANNEL,
            to=format_to(post_to),
            account_id=account_id,
            thread_id=str(thread_id) if thread_id is not None else None,
        ),
        identities=(f"msg:{message.id}",),  # snowflakes are unique across channels (D16)
    )


def interaction_chat(
    interaction: discord.Interaction, user_id: int
) -> tuple[ChatType, int, int | None, int] | None:
    """(chat_type, chat_id, thread_id, post-to channel id) of a press or slash command: the
    chat its messages have (a thread's is its channel's, with the thread), so a press answers
    in the session it was shown in (D73, D121)."""
    channel_id = interaction.channel_id
    if channel_id is None:
        return None
    chat = _chat_of(interaction.channel, user_id)
    if chat is not None:
        return chat[0], chat[1], chat[2], chat[3]
    if interaction.guild_id is None:
        return "direct", user_id, None, channel_id
    return "channel", channel_id, None, channel_id


def interaction_inbound(
    interaction: discord.Interaction, text: str, *, account_id: str, button: bool = False
) -> InboundMessage | None:
    """A press or slash command as a message in the chat it came from (see interaction_chat),
    addressed to the bot; the interaction's id is its D16 identity."""
    user = interaction.user
    chat = interaction_chat(interaction, user.id) if user is not None else None
    if user is None or chat is None or user.bot:
        return None
    chat_type, chat_id, thread_id, post_to = chat
    thread = str(thread_id) if thread_id is not None else None
    return InboundMessage(
        channel=CHANNEL,
        account_id=account_id,
        chat_type=chat_type,
        chat_id=str(chat_id),
        thread_id=thread,
        sender_id=str(user.id),
        sender_name=user.display_name,
        text=text,
        button=button,
        mentioned=True,  # a press or a slash command addresses the bot
        reply_to=DeliveryContext(
            channel=CHANNEL, to=format_to(post_to), account_id=account_id, thread_id=thread
        ),
        identities=(f"interaction:{interaction.id}",),
    )
