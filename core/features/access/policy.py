"""Who may talk to the bot (D11): the effective policy of a channel account, and its verdict.

Pure functions of the config and the message, so every rule is testable without I/O. Every
installed channel whose spec does not declare otherwise is guarded (D39, D94): the web chat's
user holds the gateway token (the owner), and a channel no registry knows is an in-process
adapter registered by code, not a place strangers can reach. A third-party channel whose section
lacks D11's fields gets their safe defaults (pairing for DMs), with its `owners` if it has them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeVar

from core.config import CrosstalkConfig
from core.config.schema_channels import (
    AccountConfig,
    AccountGroupsConfig,
    ChannelCommon,
    DmPolicy,
    GroupPolicy,
)
from core.model.inbound import InboundMessage
from core.model.roles import Role

T = TypeVar("T")

Reason = Literal[
    "dms disabled",
    "not on the allowlist",
    "groups disabled",
    "group not on the allowlist",
    "group not approved",
]


@dataclass(frozen=True, slots=True)
class AccessPolicy:
    """The D11 fields of one channel account, after inheriting the channel's values."""

    channel: str
    account_id: str
    dm_policy: DmPolicy
    allow_from: tuple[str, ...]
    group_policy: GroupPolicy
    groups_allow: tuple[str, ...]
    owners: tuple[str, ...]
    require_mention: bool

    def is_owner(self, user_id: str) -> bool:
        return "*" in self.owners or user_id in self.owners

    def allow_listed(self, user_id: str) -> bool:
        return "*" in self.allow_from or user_id in self.allow_from

    def group_listed(self, chat_id: str) -> bool:
        return "*" in self.groups_allow or chat_id in self.groups_allow

    def role_of(self, user_id: str, *, approved: bool) -> Role:
        """D60: owners; members (paired, or listed by id in `allowFrom`); everyone else a
        guest (`allowFrom: ["*"]`, `dmPolicy: open`, a non-member in an allowed group)."""
        if self.is_owner(user_id):
            return "owner"
        if approved or user_id in self.allow_from:
            return "member"
        return "guest"


def access_policy(
    config: CrosstalkConfig, channel: str, account_id: str = "default"
) -> AccessPolicy | None:
    """The policy for `channel`/`account_id`, or None for channels that are not guarded.

    A platform without a config section still gets the defaults (pairing): safe by default.
    """
    if not _installed_and_guarded(channel):
        return None
    defaults = ChannelCommon()  # a section's D11 defaults
    section = getattr(config.channels, channel, None) or defaults
    accounts = getattr(section, "accounts", None) or {}
    account = accounts.get(account_id) if account_id != "default" else None
    if not isinstance(account, AccountConfig):  # the default account is the top level
        account = AccountConfig()
    groups = getattr(section, "groups", None)
    if not isinstance(groups, type(defaults.groups)):
        groups = defaults.groups
    acc_groups = account.groups or AccountGroupsConfig()
    return AccessPolicy(
        channel=channel,
        account_id=account_id,
        dm_policy=_inherit(account.dm_policy, getattr(section, "dm_policy", defaults.dm_policy)),
        allow_from=tuple(
            _inherit(account.allow_from, getattr(section, "allow_from", defaults.allow_from))
        ),
        group_policy=_inherit(
            account.group_policy, getattr(section, "group_policy", defaults.group_policy)
        ),
        groups_allow=tuple(_inherit(acc_groups.allow, groups.allow)),
        owners=tuple(getattr(section, "owners", None) or ()),
        require_mention=_inherit(acc_groups.require_mention, groups.require_mention),
    )


def guarded_channels() -> tuple[str, ...]:
    """Every channel D11 guards: each installed channel whose spec does not opt out (D39,
    D160, D94), in the registry's order. Pairing, its HTTP routes and the
    `/pair` command accept exactly these."""
    from core.config.channel_registry import installed_channels

    return tuple(name for name, spec in installed_channels().items() if spec.guarded)


def _installed_and_guarded(channel: str) -> bool:
    from core.config.channel_registry import installed_channels

    spec = installed_channels().get(channel)
    return spec is not None and spec.guarded


def _account_ids(channel: str, section: object) -> list[str]:
    from core.config.channel_registry import installed_channels

    spec = installed_channels().get(channel)
    if spec is not None:
        return [account_id for account_id, _ in spec.account_configs(section)]
    account_ids = getattr(section, "account_ids", None)
    return list(account_ids()) if callable(account_ids) else ["default"]


def _inherit(own: T | None, inherited: T) -> T:
    return inherited if own is None else own


@dataclass(frozen=True, slots=True)
class Verdict:
    """`admit` (with the sender's `role`, D60), or a refusal `reason`; `pair` means: refused
    unless the pairing flow says so."""

    admit: bool
    reason: Reason | None = None
    pair: bool = False
    role: Role = "guest"


def judge(
    policy: AccessPolicy, msg: InboundMessage, *, approved: bool, group_approved: bool = False
) -> Verdict:
    """Apply D11 to one message; `approved` = the sender was paired on this account,
    `group_approved` = the group was (D62)."""
    admit = Verdict(True, role=policy.role_of(msg.sender_id, approved=approved))
    if msg.chat_type != "direct":
        if policy.group_policy == "disabled":
            return Verdict(False, "groups disabled")
        if policy.group_policy in ("allowlist", "pairing") and not (
            policy.group_listed(msg.chat_id) or group_approved
        ):
            if policy.group_policy == "allowlist":
                return Verdict(False, "group not on the allowlist")
            if not policy.is_owner(msg.sender_id):  # an owner's word needs no approval (D100)
                return Verdict(False, "group not approved", pair=True)
        return admit
    if policy.dm_policy == "disabled":
        return Verdict(False, "dms disabled")
    if (
        policy.dm_policy == "open"
        or policy.is_owner(msg.sender_id)
        or policy.allow_listed(msg.sender_id)
        or approved
    ):
        return admit
    if policy.dm_policy == "pairing":
        return Verdict(False, pair=True)
    return Verdict(False, "not on the allowlist")


def needs_approval_lookup(policy: AccessPolicy, msg: InboundMessage) -> bool:
    """Whether `judge` depends on the store (so owners and members by id cost no query); in
    groups and open DMs the approval decides between member and guest (D60)."""
    if policy.is_owner(msg.sender_id) or msg.sender_id in policy.allow_from:
        return False
    if msg.chat_type != "direct":
        return policy.group_policy != "disabled"
    return policy.dm_policy != "disabled"


def group_pairing_id(chat_id: str) -> str:
    """How an approved group is stored among approved senders (D62): `group:<chatId>`."""
    return f"group:{chat_id}"


def needs_group_lookup(policy: AccessPolicy, msg: InboundMessage) -> bool:
    """Whether `judge` depends on the group's approval (D62)."""
    return (
        msg.chat_type != "direct"
        and policy.group_policy == "pairing"
        and not policy.group_listed(msg.chat_id)
    )
