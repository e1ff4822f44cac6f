"""Slack's native buttons (D72, D121): Block Kit out, block actions in.

The request is a section with the text and an actions block whose buttons carry their command
as `value`; a press is a `block_actions` payload (Socket Mode's `interactive` envelope or the
interactivity URL), acknowledged by Bolt and routed as an inbound message with `button: true`
and the action's `action_ts` as its D16 identity.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from adapters.slack.normalize import CHANNEL
from core.api.channels import Button, ChatType, DeliveryContext, InboundMessage


def button_blocks(text: str, buttons: tuple[Button, ...]) -> list[dict[str, Any]]:
    return [
        {"type": "section", "text": {"type": "mrkdwn", "text": text[:3000]}},
        {
            "type": "actions",
            "elements": [
                {
                    "type": "button",
                    "action_id": f"crosstalk_{i}",
                    "text": {"type": "plain_text", "text": b.label[:75]},
                    "value": b.command[:2000],
                }
                for i, b in enumerate(buttons)
            ],
        },
    ]


def press_inbound(
    body: Mapping[str, Any], *, account_id: str, chat_type: ChatType | None = None
) -> InboundMessage | None:
    """The press as an inbound message of the chat its button was shown in (`chat_type` as the
    adapter knows the channel; a press in a thread carries the thread), so it lands in the
    session of that chat's messages (D73, D121)."""
    actions = body.get("actions") or []
    user = (body.get("user") or {}).get("id")
    channel_id = (body.get("channel") or {}).get("id")
    if body.get("type") != "block_actions" or not actions or not user or not channel_id:
        return None
    action = actions[0]
    value = action.get("value")
    if not isinstance(value, str) or not value.startswith("/"):
        return None
    if chat_type is None:
        chat_type = "direct" if str(channel_id).startswith("D") else "channel"
    container = body.get("container") or {}
    thread_ts = container.get("thread_ts") or (body.get("message") or {}).get("thread_ts")
    thread_id = str(thread_ts) if thread_ts else None
    stamp = action.get("action_ts") or body.get("trigger_id") or ""
    return InboundMessage(
        channel=CHANNEL,
        account_id=account_id,
        chat_type=chat_type,
        chat_id=str(user) if chat_type == "direct" else str(channel_id),
        thread_id=thread_id,
        sender_id=str(user),
        sender_name=(body.get("user") or {}).get("name"),
        text=value,
        button=True,
        mentioned=True,  # a press on the bot's own message addresses the bot
        reply_to=DeliveryContext(
            channel=CHANNEL, to=f"channel:{channel_id}", account_id=account_id, thread_id=thread_id
        ),
        identities=(f"action:{channel_id}:{stamp}",),
    )


def slash_inbound(body: Mapping[str, Any], *, account_id: str) -> InboundMessage | None:
    """A slash command from the app's manifest (D74) as the message it stands for: `/approve
    ABCD2345` typed in the box arrives as a `slash_commands` payload, not as a message."""
    command, user, channel_id = body.get("command"), body.get("user_id"), body.get("channel_id")
    if not isinstance(command, str) or not command.startswith("/") or not user or not channel_id:
        return None
    text = f"{command} {body.get('text') or ''}".strip()
    chat_type: ChatType = "direct" if str(channel_id).startswith("D") else "channel"
    return InboundMessage(
        channel=CHANNEL,
        account_id=account_id,
        chat_type=chat_type,
        chat_id=str(user) if chat_type == "direct" else str(channel_id),
        sender_id=str(user),
        sender_name=body.get("user_name"),
        text=text,
        mentioned=True,  # a slash command addresses the app
        reply_to=DeliveryContext(
            channel=CHANNEL, to=f"channel:{channel_id}", account_id=account_id
        ),
        identities=(f"slash:{body.get('trigger_id') or ''}",),
    )
