"""``channels.matrix``: its config model and registry entry (D77). Imports no SDK.

Login is by access token, or by password once: the session it yields (device id, token) is
kept in the state directory and reused, so a restart is the same device with the same
end-to-end keys (D170).
"""

from __future__ import annotations

import re
from typing import Self

from pydantic import SecretStr, field_validator, model_validator

from core.api.channels import ChannelCommon, ChannelSpec

_USER_ID = re.compile(r"^@[^:\s]+:\S+$")


class MatrixConfig(ChannelCommon):
    """``channels.matrix``: one Matrix account (``owners``/``allowFrom`` are user ids)."""

    homeserver: str
    """The client-server API base, e.g. ``https://matrix.example.org``."""
    user_id: str
    """The bot's full user id, ``@name:server``."""
    access_token: SecretStr | None = None
    password: SecretStr | None = None
    device_id: str | None = None
    """With ``accessToken``: the token's device (asked from the server when unset)."""
    device_name: str = "Crosstalk"
    edits_start_turn: bool = False
    """An edited message (``m.replace``) is a new turn; by default edits are ignored (D16)."""

    @field_validator("homeserver")
    @classmethod
    def _url(cls, value: str) -> str:
        text = value.strip().rstrip("/")
        if not text.startswith(("http://", "https://")):
            raise ValueError(f"must be an http(s) URL (got {value!r})")
        return text

    @field_validator("user_id")
    @classmethod
    def _user(cls, value: str) -> str:
        if not _USER_ID.match(value.strip()):
            raise ValueError(f"must be a full Matrix user id like @bot:example.org (got {value!r})")
        return value.strip()

    @model_validator(mode="after")
    def _credential(self) -> Self:
        if self.access_token is None and self.password is None:
            raise ValueError("channels.matrix needs accessToken or password")
        return self


SPEC = ChannelSpec("matrix", MatrixConfig, "adapters.matrix.adapter:MatrixAdapter", order=12)
