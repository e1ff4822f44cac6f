"""The ``webchat`` channel's registry entry (D38, D94): the built-in web chat.

Its section exists with its defaults when the file has none (the web chat is on unless
``channels.webchat.enabled: false``), its user holds the gateway token so D11 does not guard it
(D39), and its messages are the owner's main session (D17).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from core.api.channels import ChannelSpec, ConfigModel, IdList


class WebchatConfig(ConfigModel):
    """Built-in web chat. Whoever holds the gateway token is its owner (D4)."""

    enabled: bool = True
    owners: IdList = Field(default_factory=lambda: ["*"])
    streaming: Literal["off", "edit"] = "edit"

    def is_owner(self, user_id: str) -> bool:
        """Owner check of D4 (exact id match, or ``"*"``)."""
        return "*" in self.owners or user_id.strip() in self.owners


SPEC = ChannelSpec(
    "webchat",
    WebchatConfig,
    "adapters.webchat.adapter:WebchatAdapter",
    order=0,
    guarded=False,
    default_section=True,
    main_session=True,
)
