"""The one shape every adapter turns a platform event into."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from core.model.attachments import Attachment
from core.model.delivery_context import DeliveryContext
from core.model.text import clean_json

ChatType = Literal["direct", "group", "channel"]


class InboundMessage(BaseModel):
    """A user's message, normalised; the router derives the session key from it."""

    model_config = ConfigDict(frozen=True)

    channel: str
    account_id: str = "default"
    chat_type: ChatType
    chat_id: str = Field(description="peer id for DMs, group/channel id otherwise")
    thread_id: str | None = None
    topic: bool = Field(default=False, description="Telegram forum topic rather than thread")
    sender_id: str
    sender_name: str | None = None
    chat_title: str | None = None
    text: str
    attachments: tuple[Attachment, ...] = ()
    """Photos, voice notes, files...; a message may be only attachments (``text`` empty)."""
    message_id: str | None = None
    timestamp_ms: int | None = None
    mentioned: bool = False
    reply_to_bot: bool = False
    reply_to: DeliveryContext
    button: bool = Field(
        default=False,
        description="a native button's press (D72): `text` is the button's command; only "
        "owners' presses count, the others are logged and ignored",
    )
    identities: tuple[str, ...] = Field(
        default=(), description="platform identities (D16): a repeat of any is a redelivery"
    )

    @property
    def sender_key(self) -> str:
        """`<channel>:<userId>`: who sent it, as D63 rules, D64 limits and runs name them."""
        return f"{self.channel}:{self.sender_id}"

    @property
    def group_key(self) -> str | None:
        """`<channel>:<groupId>` when it came from a group (D63 `group:` rules); None in a DM."""
        return None if self.chat_type == "direct" else f"{self.channel}:{self.chat_id}"

    @model_validator(mode="before")
    @classmethod
    def _clean_text(cls, data: Any) -> Any:
        """D12: every text a platform (or the web chat) hands us, storable before it is used."""
        if isinstance(data, dict):
            return {
                k: clean_json(v.model_dump(by_alias=True) if isinstance(v, BaseModel) else v)
                for k, v in data.items()
            }
        return data
