"""D11 rules as pure functions: inheritance per account, verdicts, the dmScope warning."""

from __future__ import annotations

from typing import Any

import pytest

from core.config import validate_config
from core.features.access.policy import access_policy, judge
from core.model.delivery_context import DeliveryContext
from core.model.inbound import ChatType, InboundMessage


def config(section: dict[str, Any], **top: Any) -> Any:
    return validate_config({"channels": {"telegram": {"botToken": "1:x", **section}}, **top})


def msg(
    sender: str,
    *,
    chat_type: ChatType = "direct",
    chat_id: str | None = None,
    account: str = "default",
) -> InboundMessage:
    chat = chat_id or sender
    return InboundMessage(
        channel="telegram",
        account_id=account,
        chat_type=chat_type,
        chat_id=chat,
        sender_id=sender,
        text="hi",
        reply_to=DeliveryContext(channel="telegram", to=chat),
    )


def test_defaults_are_pairing_for_dms_and_groups() -> None:
    policy = access_policy(config({"owners": ["1"]}), "telegram")
    assert policy is not None
    assert (policy.dm_policy, policy.group_policy, policy.allow_from) == ("pairing", "pairing", ())
    assert judge(policy, msg("1"), approved=False).admit  # owner
    stranger = judge(policy, msg("2"), approved=False)
    assert not stranger.admit and stranger.pair
    assert judge(policy, msg("2"), approved=True).admit
    group = judge(policy, msg("2", chat_type="group", chat_id="-5"), approved=False)
    assert not group.admit and group.pair and group.reason == "group not approved"  # D62
    approved = judge(
        policy, msg("2", chat_type="group", chat_id="-5"), approved=False, group_approved=True
    )
    assert approved.admit and approved.role == "guest"
    assert judge(policy, msg("1", chat_type="group", chat_id="-5"), approved=False).admit
    open_groups = access_policy(config({"groupPolicy": "open"}), "telegram")
    assert open_groups is not None
    assert judge(open_groups, msg("2", chat_type="group", chat_id="-5"), approved=False).admit


def test_web_chat_and_unknown_channels_are_not_guarded() -> None:
    cfg = config({})
    assert access_policy(cfg, "webchat") is None
    assert access_policy(cfg, "testchat") is None
    assert access_policy(validate_config({}), "discord") is not None  # no section: defaults


def test_extra_account_inherits_unset_fields() -> None:
    cfg = config(
        {
            "dmPolicy": "allowlist",
            "allowFrom": [5],
            "groupPolicy": "allowlist",
            "groups": {"allow": ["-1"], "requireMention": False},
            "accounts": {
                "Work": {"botToken": "2:y", "dmPolicy": "open", "groups": {"allow": ["-2"]}}
            },
        }
    )
    default = access_policy(cfg, "telegram")
    work = access_policy(cfg, "telegram", "work")
    assert default is not None and work is not None
    assert (default.dm_policy, default.allow_from, default.groups_allow) == (
        "allowlist",
        ("5",),
        ("-1",),
    )
    assert (
        work.dm_policy,
        work.allow_from,
        work.group_policy,
        work.groups_allow,
        work.require_mention,
    ) == ("open", ("5",), "allowlist", ("-2",), False)


@pytest.mark.parametrize(
    ("section", "sender", "reason"),
    [
        ({"dmPolicy": "disabled", "owners": ["1"]}, "1", "dms disabled"),
        ({"dmPolicy": "allowlist", "allowFrom": ["3"]}, "2", "not on the allowlist"),
    ],
)
def test_dm_refusals(section: dict[str, Any], sender: str, reason: str) -> None:
    policy = access_policy(config(section), "telegram")
    assert policy is not None
    verdict = judge(policy, msg(sender), approved=False)
    assert (verdict.admit, verdict.reason, verdict.pair) == (False, reason, False)


def test_allow_from_star_and_open() -> None:
    for section in ({"dmPolicy": "allowlist", "allowFrom": ["*"]}, {"dmPolicy": "open"}):
        policy = access_policy(config(section), "telegram")
        assert policy is not None and judge(policy, msg("99"), approved=False).admit


@pytest.mark.parametrize(
    ("section", "chat", "admit"),
    [
        ({"groupPolicy": "disabled"}, "-1", False),
        ({"groupPolicy": "allowlist"}, "-1", False),
        ({"groupPolicy": "allowlist", "groups": {"allow": ["-1"]}}, "-1", True),
        ({"groupPolicy": "allowlist", "groups": {"allow": ["*"]}}, "-7", True),
    ],
)
def test_group_policy(section: dict[str, Any], chat: str, admit: bool) -> None:
    policy = access_policy(config(section), "telegram")
    assert policy is not None
    assert judge(policy, msg("2", chat_type="group", chat_id=chat), approved=False).admit is admit
