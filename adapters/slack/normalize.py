"""Slack event dict → InboundMessage, target parsing and error mapping, with no I/O.

Kept apart from the adapter so the chat/thread/mention rules can be read and tested on their
own: DMs (``channel_type`` im) are "direct" keyed by the peer's user id, public channels are
"channel", private channels and multi-person DMs are "group"; a message inside a thread carries
``thread_ts`` as its thread id. Replies always go to ``channel:<id>`` (original case).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError, SlackClientError

from core.api.channels import (
    Attachment,
    ChannelUnavailable,
    ChatType,
    DeliveryContext,
    DeliveryError,
    InboundMessage,
    RateLimited,
    TargetForbidden,
    TargetNotFound,
    kind_of_mime,
)

CHANNEL = "slack"

#: ``message`` subtypes that are a person saying something; edits, joins, deletes… are not.
USER_SUBTYPES = frozenset({None, "thread_broadcast", "file_share", "me_message"})

_CHANNEL_TYPES: dict[str, ChatType] = {
    "im": "direct",
    "channel": "channel",
    "group": "group",
    "mpim": "group",
}

#: Errors that mean the token itself is bad: retrying cannot help.
AUTH_ERRORS = frozenset(
    {
        "invalid_auth",
        "not_authed",
        "account_inactive",
        "token_revoked",
        "token_expired",
        "not_allowed_token_type",
        "no_permission",
        "team_access_not_granted",
    }
)
_NOT_FOUND = frozenset(
    {"channel_not_found", "user_not_found", "thread_not_found", "message_not_found"}
)
_FORBIDDEN = frozenset(
    {
        "not_in_channel",
        "restricted_action",
        "is_archived",
        "channel_is_archived",
        "cannot_dm_bot",
        "ekm_access_denied",
        "restricted_action_read_only_channel",
        "restricted_action_thread_only_channel",
        "restricted_action_non_threadable_channel",
        "missing_scope",
        "team_access_not_granted",
        "messages_tab_disabled",
    }
)
#: Failures to reach Slack at all (no API answer): the channel is unavailable for now.
NETWORK_ERRORS = (aiohttp.ClientError, SlackClientError, OSError, TimeoutError)


@dataclass(frozen=True, slots=True)
class BotIdentity:
    """Who the bot is, from ``auth.test``; needed to spot mentions and our own messages."""

    user_id: str
    bot_id: str | None = None
    user_name: str | None = None
    team_id: str | None = None


class SeenEvents:
    """Bounded memory of handled ``(channel, ts)`` pairs and the event id that brought them.

    Slack sends a channel mention twice (``message`` and ``app_mention``, same ts, two event
    ids): the twin is dropped here. A *redelivery* (the same event id again, e.g. a retry with
    ``X-Slack-Retry-Num``) passes, so the router's durable check drops and counts it (D16).
    """

    def __init__(self, size: int = 2048) -> None:
        self._size = size
        self._seen: OrderedDict[tuple[str, str], str | None] = OrderedDict()

    def first_time(self, channel: str, ts: str, event_id: str | None = None) -> bool:
        key = (channel, ts)
        if key in self._seen:
            return event_id is not None and self._seen[key] == event_id
        self._seen[key] = event_id
        if len(self._seen) > self._size:
            self._seen.popitem(last=False)
        return True


def ignore_reason(event: Mapping[str, Any], bot: BotIdentity | None) -> str | None:
    """Why an event is not a user message for Crosstalk, or ``None`` when it is one."""
    if event.get("type") == "message" and event.get("subtype") not in USER_SUBTYPES:
        return f"subtype {event.get('subtype')}"
    if event.get("bot_id") or event.get("bot_profile"):
        return "bot message"
    user = event.get("user")
    if not user:
        return "no user"
    if bot is not None and user == bot.user_id:
        return "own message"
    if not event.get("channel") or not event.get("ts"):
        return "no channel or ts"
    if event.get("hidden"):
        return "hidden"
    return None


def chat_type_of(event: Mapping[str, Any], known: ChatType | None = None) -> ChatType:
    """Chat type from ``channel_type``; ``app_mention`` lacks it, so use what is known or the id.

    A ``C…`` id may also be a private channel (newer Slack workspaces), hence ``known`` first.
    """
    mapped = _CHANNEL_TYPES.get(str(event.get("channel_type") or ""))
    if mapped is not None:
        return mapped
    if known is not None:
        return known
    channel = str(event.get("channel", ""))
    return {"D": "direct", "G": "group"}.get(channel[:1], "channel")  # type: ignore[return-value]


def sender_name_of(event: Mapping[str, Any]) -> str | None:
    """Display name Slack sometimes embeds in the event (``user_profile``)."""
    profile = event.get("user_profile")
    if isinstance(profile, Mapping):
        for field in ("display_name", "real_name", "name"):
            if profile.get(field):
                return str(profile[field])
    return None


def to_inbound(
    event: Mapping[str, Any],
    *,
    account_id: str,
    bot: BotIdentity | None,
    chat_type: ChatType,
    sender_name: str | None = None,
    chat_title: str | None = None,
    event_id: str | None = None,
) -> InboundMessage:
    """One accepted Slack message event (``message`` or ``app_mention``) as the router wants it."""
    channel_id = str(event["channel"])
    user = str(event["user"])
    ts = str(event["ts"])
    text = str(event.get("text") or "")
    thread_ts = event.get("thread_ts")
    thread_id = str(thread_ts) if thread_ts else None
    mention = f"<@{bot.user_id}>" if bot is not None else None
    mentioned = event.get("type") == "app_mention" or bool(mention and mention in text)
    reply_to_bot = bool(
        bot is not None
        and thread_id
        and thread_id != ts
        and event.get("parent_user_id") == bot.user_id
    )
    return InboundMessage(
        channel=CHANNEL,
        account_id=account_id,
        chat_type=chat_type,
        attachments=attachments_of(event),
        chat_id=user if chat_type == "direct" else channel_id,
        thread_id=thread_id,
        sender_id=user,
        sender_name=sender_name or sender_name_of(event),
        chat_title=chat_title,
        text=text,
        message_id=ts,
        timestamp_ms=int(float(ts) * 1000),
        mentioned=mentioned,
        reply_to_bot=reply_to_bot,
        reply_to=DeliveryContext(
            channel=CHANNEL, to=f"channel:{channel_id}", account_id=account_id, thread_id=thread_id
        ),
        identities=((f"event:{event_id}",) if event_id else ()) + (f"msg:{channel_id}:{ts}",),
    )


def attachments_of(event: Mapping[str, Any]) -> tuple[Attachment, ...]:
    """Shared files (``file_share``); Slack voice clips are audio files of subtype slack_audio."""
    out: list[Attachment] = []
    for f in event.get("files") or []:
        if not isinstance(f, Mapping):
            continue
        mime = f.get("mimetype")
        kind = "voice" if f.get("subtype") == "slack_audio" else kind_of_mime(mime)
        size = f.get("size")
        out.append(
            Attachment(
                kind=kind,
                name=str(f.get("name") or f.get("title") or "file"),
                mime=mime,
                size=size if isinstance(size, int) else None,
                file_id=f.get("url_private") or f.get("id"),
            )
        )
    return tuple(out)


def channel_of_target(to: str) -> str:
    """``channel:C123`` / ``user:U123`` / bare id → the ``channel`` argument of chat.postMessage.

    A user id posts into the app's DM with that user, as Slack allows for bot tokens.
    """
    kind, sep, rest = to.partition(":")
    if sep and kind.lower() in ("channel", "user", "im", "group"):
        return rest.strip()
    return to.strip()


def chat_of_target(to: str) -> str:
    """`C123`, `group: C123` → `channel:C123`, as an event's route names the chat; a `user:`
    target (a DM the platform opens) stays as it is (D179)."""
    text = to.strip()
    if text.lower().startswith("user:"):
        return text
    return f"channel:{channel_of_target(text)}"


def _header(headers: Mapping[str, Any] | None, name: str) -> str | None:
    for key, value in (headers or {}).items():
        if key.lower() == name.lower():
            return str(value[0] if isinstance(value, list) and value else value)
    return None


def map_api_error(exc: SlackApiError, *, where: str) -> DeliveryError:
    """A failed Web API call as the gate's typed error (429 → RateLimited with Retry-After)."""
    resp = exc.response
    status = getattr(resp, "status_code", None)
    data = getattr(resp, "data", None)
    code = str(data.get("error") or "") if isinstance(data, Mapping) else ""
    msg = f"{where}: {code or 'error'} (HTTP {status})"
    if status == 429 or code == "ratelimited":
        raw = _header(getattr(resp, "headers", None), "Retry-After")
        try:
            retry_after = float(raw) if raw is not None else 1.0
        except ValueError:
            retry_after = 1.0
        return RateLimited(msg, retry_after)
    if code in _NOT_FOUND or status == 404:
        return TargetNotFound(msg)
    if code in _FORBIDDEN or status == 403:
        return TargetForbidden(msg)
    if code in AUTH_ERRORS or status == 401 or (status is not None and status >= 500):
        return ChannelUnavailable(msg)
    return DeliveryError(msg)
