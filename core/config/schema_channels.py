"""``channels.*``: the shared pieces of every channel section (D11's access fields, accounts).

A channel's own section model lives in its package, beside its spec (D94). Each platform section
holds the fields of its *default* account at top level and any further accounts under
``accounts``; ``iter_accounts()`` gives adapters one uniform list.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar

from pydantic import Field, SecretStr

from core.config.schema_base import ConfigModel, IdList, normalize_account_id

__all__ = [
    "AccountConfig",
    "AccountGroupsConfig",
    "ChannelCommon",
    "ChannelsConfig",
    "DmPolicy",
    "GroupPolicy",
    "GroupsConfig",
    "check_url",
    "iter_accounts",
    "normalize_accounts",
]

DEFAULT_ACCOUNT_ID = "default"


def _check_url(value: str | None) -> str | None:
    if value is None:
        return None
    text = value.strip()
    if not text.startswith(("http://", "https://", "ws://", "wss://")):
        raise ValueError(f"must be an http(s) or ws(s) URL (got {value!r})")
    return text.rstrip("/")


DmPolicy = Literal["pairing", "allowlist", "open", "disabled"]
GroupPolicy = Literal["pairing", "open", "allowlist", "disabled"]


class AccountGroupsConfig(ConfigModel):
    """``groups`` of one extra account: unset fields inherit the channel's (D11)."""

    require_mention: bool | None = None
    allow: IdList | None = None


class AccountConfig(ConfigModel):
    """Fields of one bot account. ``CREDENTIAL`` names the field that makes it usable.

    The access fields (D11) are optional here: an extra account inherits the channel's value
    for every one it leaves unset.
    """

    CREDENTIAL: ClassVar[str] = ""

    edits_start_turn: bool = False
    """An edited message (Telegram ``edited_message``, Slack ``message_changed``, Discord
    ``MESSAGE_UPDATE``) is a new turn; by default edits are ignored (D16)."""
    dm_policy: DmPolicy | None = None
    allow_from: IdList | None = None
    group_policy: GroupPolicy | None = None
    groups: AccountGroupsConfig | None = None

    def has_credentials(self) -> bool:
        """True when the account's main credential is set (so it is worth starting)."""
        value = getattr(self, self.CREDENTIAL, None)
        return isinstance(value, SecretStr) and bool(value.get_secret_value())


def _is_owner(owners: list[str], user_id: str) -> bool:
    return "*" in owners or user_id.strip() in owners


class GroupsConfig(AccountGroupsConfig):
    """Group-chat behaviour of a channel (its accounts inherit it)."""

    require_mention: bool = True
    allow: IdList = Field(default_factory=list)
    """Group/channel ids admitted under ``groupPolicy: allowlist`` (``"*"`` = any)."""


_A = TypeVar("_A", bound=AccountConfig)


def _normalize_accounts(value: Any) -> Any:
    """Account ids are normalised (R1.2); ``default`` is reserved for the top-level fields."""
    if not isinstance(value, dict):
        return value
    out: dict[Any, Any] = {}
    for raw_key, account in value.items():
        key = normalize_account_id(str(raw_key))
        if key == DEFAULT_ACCOUNT_ID:
            raise ValueError(
                "account id 'default' is reserved: put the default account's fields at the "
                "top level of the channel section",
            )
        if key in out:
            raise ValueError(f"duplicate account id {key!r} after normalisation")
        out[key] = account
    return out


def _iter_accounts(
    channel: AccountConfig, cls: type[_A], extra: dict[str, _A]
) -> list[tuple[str, _A]]:
    """``("default", top-level fields)`` first, then the extra accounts in file order.

    The default account is left out only when extra accounts exist and the top level has no
    credential, so configuring just ``accounts.work`` does not start a token-less bot.
    Extra accounts do not inherit top-level fields: each one is self-contained.
    """
    names = [n for n in cls.model_fields if n in channel.model_fields_set]
    default = cls.model_validate({n: getattr(channel, n) for n in names})
    result: list[tuple[str, _A]] = []
    if default.has_credentials() or not extra:
        result.append((DEFAULT_ACCOUNT_ID, default))
    result.extend(extra.items())
    return result


class QueueConfig(ConfigModel):
    """``messages.queue`` and ``channels.<ch>.queue`` (D75): what messages that arrive while a
    session's turn runs do."""

    mode: Literal["queue", "collect", "steer", "interrupt"] = "queue"
    debounce_ms: int = Field(default=0, ge=0, le=60_000)


class _ChannelCommon(ConfigModel):
    enabled: bool = True
    owners: IdList = Field(default_factory=list)
    """Platform user ids allowed to run owner commands such as ``/send``; ``"*"`` = everyone."""
    groups: GroupsConfig = Field(default_factory=GroupsConfig)
    dm_policy: DmPolicy = "pairing"
    """Who may DM the bot (D11): unknown senders get a pairing code by default."""
    allow_from: IdList = Field(default_factory=list)
    """Platform user ids admitted in DMs besides the owners and paired users (``"*"`` = all)."""
    group_policy: GroupPolicy = "pairing"
    """Who may talk in groups (D11, D62): by default a group an owner approved (group pairing)."""
    # (the account classes declare the access fields as optional, "inherit"; the channel's
    # own values are required, hence the type: ignore[misc] on the three channel classes)
    streaming: Literal["off", "edit"] = "edit"
    """``edit``: a live preview of the reply, edited in place while the model writes."""
    queue: QueueConfig | None = None
    """Busy input on this channel (D75); unset: ``messages.queue``."""
    status_reactions: bool = True
    """👀 on a message when its turn starts, ✅/❌ when it ends (D74)."""

    def is_owner(self, user_id: str) -> bool:
        """Owner check of D4 (exact id match, or ``"*"``)."""
        return _is_owner(self.owners, user_id)


# Public names for channel sections (D160, D94): a channel package builds its section as
# ``class XConfig(ChannelCommon, XAccountConfig)`` with ``accounts`` and ``iter_accounts``, so
# D11's fields and per-account inheritance are the same on every platform.
ChannelCommon = _ChannelCommon
check_url = _check_url
normalize_accounts = _normalize_accounts
iter_accounts = _iter_accounts


class ChannelsConfig(ConfigModel):
    """``channels``: one section per installed channel, validated by the channel's own model
    (its spec, D38, D94); a channel is configured when its section is present. Core names no
    channel: the fields are added from the installed specs (:func:`with_installed_channels`).
    """

    if TYPE_CHECKING:

        def __getattr__(self, name: str) -> Any:
            """A section by channel name (``config.channels.telegram``), as the spec's model."""
            ...

    def section(self, name: str) -> Any:
        """The section of channel `name`, or None when it is not configured."""
        return getattr(self, name, None)

    def enabled_channels(self) -> list[str]:
        """Names of channels that are configured and enabled, in the registry's order."""
        return [
            name
            for name in type(self).model_fields
            if (section := getattr(self, name)) is not None and getattr(section, "enabled", True)
        ]


def with_installed_channels(base: type[ChannelsConfig]) -> type[ChannelsConfig]:
    """``channels`` with a field per installed channel (D38), validated by the channel's own
    config model; a spec with ``default_section`` is present with its defaults; any other name
    stays an unknown key."""
    from pydantic import create_model

    from core.config.channel_registry import installed_channels

    fields: dict[str, Any] = {
        name: (
            (spec.config_model, Field(default_factory=spec.config_model))
            if spec.default_section
            else (spec.config_model | None, None)
        )
        for name, spec in installed_channels().items()
        if name not in base.model_fields
    }
    if not fields:
        return base
    model: type[ChannelsConfig] = create_model(
        "ChannelsConfig", __base__=base, __module__=__name__, **fields
    )
    return model
