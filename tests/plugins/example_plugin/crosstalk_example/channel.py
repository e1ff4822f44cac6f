"""The `loopback` channel's registry entry: its config model and where its adapter lives.

Loaded while the config is validated, so it imports only `core.api.channels`; the adapter
module is imported when `channels.loopback` is configured.
"""

from __future__ import annotations

from pydantic import Field

from core.api.channels import ChannelSpec, ConfigModel


class LoopbackConfig(ConfigModel):
    """``channels.loopback``."""

    enabled: bool = True
    path: str = Field(default="/loopback", pattern=r"^/[a-z0-9/_-]*[a-z0-9]$")
    owners: list[str] = Field(default_factory=list)


SPEC = ChannelSpec("loopback", LoopbackConfig, "crosstalk_example.loopback:LoopbackAdapter")
