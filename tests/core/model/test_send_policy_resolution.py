"""Send-policy resolution: R5.2, D4 status text, D5 precedence, cases 121–130."""

from __future__ import annotations

import pytest

from core.model.send_policy import PolicyDecision, SendPolicySpec, SendRule, effective_policy_text
from tests.core.model.send_policy_helpers import DISCORD_GROUP, resolve, spec

# --- case 121 and the implicit allow -------------------------------------------------------


def test_no_policy_and_no_override_allows() -> None:
    decision = resolve(None, session_key="agent:main:main")
    assert decision == PolicyDecision("allow", "implicit", None, "no policy configured")


def test_empty_spec_behaves_like_no_policy() -> None:
    decision = resolve(SendPolicySpec(), session_key=DISCORD_GROUP)
    assert decision.action == "allow"
    assert decision.reason == "no policy configured"


def test_rules_without_match_and_no_default_fall_back_to_allow() -> None:
    decision = resolve(spec(SendRule("deny", channel="slack")), session_key=DISCORD_GROUP)
    assert decision == PolicyDecision("allow", "implicit", None, "no matching rule")


# --- per-session override (cases 122, 123) -----------------------------------------------


def test_override_deny_beats_default_allow() -> None:
    decision = resolve(spec(default="allow"), override="deny", session_key="agent:main:main")
    assert decision == PolicyDecision("deny", "session", None, "session override")


def test_override_allow_beats_matching_deny_rule() -> None:
    policy = spec(SendRule("deny", channel="discord", chat_type="group"))
    decision = resolve(policy, override="allow", session_key=DISCORD_GROUP)
    assert decision.action == "allow"
    assert decision.source == "session"


def test_override_applies_without_any_policy() -> None:
    assert resolve(None, override="deny").action == "deny"


@pytest.mark.parametrize("override", [" DENY ", "Deny\n"])
def test_override_is_trimmed_and_lowercased(override: str) -> None:
    assert resolve(spec(default="allow"), override=override).action == "deny"


@pytest.mark.parametrize("override", ["", "  ", "inherit", "maybe", "off"])
def test_unknown_override_means_inherit(override: str) -> None:
    decision = resolve(spec(default="deny"), override=override)
    assert decision == PolicyDecision("deny", "default", None, "default")


# --- rule matching (cases 124, 125, 128, 129, 130) ---------------------------------------


def test_channel_and_chat_type_rule_matches_only_that_combination() -> None:
    policy = spec(SendRule("deny", channel="discord", chat_type="group"))
    denied = resolve(policy, session_key="agent:main:x", channel="discord", chat_type="group")
    assert denied == PolicyDecision("deny", "rule", 1, "rule 1: channel=discord, chatType=group")
    allowed = resolve(policy, session_key="agent:main:x", channel="discord", chat_type="channel")
    assert allowed.action == "allow"
    assert allowed.source == "implicit"


def test_key_prefix_rule_on_bare_and_prefixed_cron_keys() -> None:
    policy = spec(SendRule("deny", key_prefix="cron:"))
    assert resolve(policy, session_key="cron:job-1").action == "deny"
    assert resolve(policy, session_key="agent:main:cron:job-1").action == "allow"
    prefixed = spec(SendRule("deny", key_prefix="agent:main:cron:"))
    assert resolve(prefixed, session_key="agent:main:cron:job-1").action == "deny"


def test_key_prefix_is_case_insensitive_on_both_sides() -> None:
    policy = spec(SendRule("deny", key_prefix="  Agent:Main:Cron: "))
    decision = resolve(policy, session_key="AGENT:main:cron:Nightly")
    assert decision.action == "deny"
    assert decision.reason == "rule 1: keyPrefix=agent:main:cron:"


def test_key_prefix_rule_needs_a_session_key() -> None:
    assert resolve(spec(SendRule("deny", key_prefix="cron:"))).action == "allow"


def test_rule_without_match_applies_to_every_session() -> None:
    policy = spec(SendRule("deny"))
    for key in ("agent:main:main", DISCORD_GROUP, "cron:job-1", None):
        decision = resolve(policy, session_key=key)
        assert decision == PolicyDecision("deny", "rule", 1, "rule 1: any session")


@pytest.mark.parametrize(
    "key",
    [
        "discord:group:dev",
        "agent:main:discord:group:dev",
        "agent:main:discord:channel:general",
        "agent:main:discord:dm:alice",
        "agent:main:discord:work:dm:alice",
        "agent:main:discord:channel:general:thread:42",
    ],
)
def test_channel_is_derived_from_bare_and_prefixed_keys(key: str) -> None:
    policy = spec(SendRule("deny", channel="discord"))
    assert resolve(policy, session_key=key).action == "deny"
    assert resolve(spec(SendRule("deny", channel="slack")), session_key=key).action == "allow"


@pytest.mark.parametrize("key", ["agent:main:main", "agent:main:dm:alice", "group:dev"])
def test_keys_without_a_channel_segment_do_not_match_channel_rules(key: str) -> None:
    assert resolve(spec(SendRule("deny", channel="main")), session_key=key).action == "allow"
    assert resolve(spec(SendRule("deny", channel="dm")), session_key=key).action == "allow"


def test_channel_comparison_is_trimmed_and_case_insensitive() -> None:
    policy = spec(SendRule("deny", channel=" Discord "))
    assert resolve(policy, session_key="agent:main:main", channel="DISCORD").action == "deny"
    assert resolve(policy, session_key="agent:main:main", channel=" discord ").action == "deny"


def test_explicit_channel_wins_over_the_key() -> None:
    policy = spec(SendRule("deny", channel="discord"))
    assert resolve(policy, session_key=DISCORD_GROUP, channel="slack").action == "allow"


def test_blank_explicit_channel_falls_back_to_the_key() -> None:
    policy = spec(SendRule("deny", channel="discord"))
    assert resolve(policy, session_key=DISCORD_GROUP, channel="  ").action == "deny"


@pytest.mark.parametrize(
    ("key", "chat_type"),
    [
        ("agent:main:telegram:group:-100", "group"),
        ("telegram:group:-100", "group"),
        ("group:-100", "group"),
        ("agent:main:discord:channel:general", "channel"),
        ("agent:main:telegram:dm:alice", "direct"),
        ("agent:main:telegram:default:dm:alice", "direct"),
    ],
)
def test_chat_type_is_derived_from_key_segments(key: str, chat_type: str) -> None:
    policy = spec(SendRule("deny", chat_type=chat_type))  # type: ignore[arg-type]
    assert resolve(policy, session_key=key).action == "deny"


def test_dm_alias_normalises_to_direct_in_rules_and_inputs() -> None:
    rule = SendRule("deny", chat_type="dm")  # type: ignore[arg-type]
    assert rule.chat_type == "direct"
    policy = spec(rule)
    assert resolve(policy, session_key="agent:main:main", chat_type="DM").action == "deny"
    assert resolve(policy, session_key="agent:main:main", chat_type="direct").action == "deny"
    assert resolve(policy, session_key="agent:main:main", chat_type="group").action == "allow"


def test_explicit_chat_type_wins_over_the_key() -> None:
    policy = spec(SendRule("deny", chat_type="group"))
    assert resolve(policy, session_key=DISCORD_GROUP, chat_type="channel").action == "allow"


def test_invalid_explicit_chat_type_falls_back_to_the_key() -> None:
    policy = spec(SendRule("deny", chat_type="group"))
    assert resolve(policy, session_key=DISCORD_GROUP, chat_type="room").action == "deny"


def test_chat_type_rule_does_not_match_when_chat_type_is_unknown() -> None:
    policy = spec(SendRule("deny", chat_type="direct"))
    assert resolve(policy, session_key="agent:main:main").action == "allow"


def test_all_match_fields_must_agree() -> None:
    policy = spec(SendRule("deny", channel="discord", chat_type="group", key_prefix="agent:ops:"))
    assert resolve(policy, session_key=DISCORD_GROUP).action == "allow"
    assert resolve(policy, session_key="agent:ops:discord:group:dev").action == "deny"


# --- precedence (cases 126, 127) ---------------------------------------------------------


def test_any_matching_deny_wins_over_an_earlier_allow() -> None:
    policy = spec(SendRule("allow", channel="discord"), SendRule("deny", chat_type="group"))
    decision = resolve(policy, session_key=DISCORD_GROUP)
    assert decision == PolicyDecision("deny", "rule", 2, "rule 2: chatType=group")


def test_first_matching_deny_is_reported() -> None:
    policy = spec(
        SendRule("allow"),
        SendRule("deny", channel="slack"),
        SendRule("deny", channel="discord"),
        SendRule("deny", chat_type="group"),
    )
    decision = resolve(policy, session_key=DISCORD_GROUP)
    assert decision.rule_index == 3
    assert decision.reason == "rule 3: channel=discord"


def test_matching_allow_beats_default_deny_and_reports_the_first_allow() -> None:
    policy = spec(
        SendRule("allow", channel="slack"),
        SendRule("allow", chat_type="group"),
        SendRule("allow", channel="discord"),
        default="deny",
    )
    decision = resolve(policy, session_key=DISCORD_GROUP)
    assert decision == PolicyDecision("allow", "rule", 2, "rule 2: chatType=group")


def test_default_deny_applies_when_no_rule_matches() -> None:
    policy = spec(SendRule("allow", channel="slack"), default="deny")
    decision = resolve(policy, session_key=DISCORD_GROUP)
    assert decision == PolicyDecision("deny", "default", None, "default")


def test_default_allow_is_reported_as_default() -> None:
    decision = resolve(spec(default="allow"), session_key=DISCORD_GROUP)
    assert decision == PolicyDecision("allow", "default", None, "default")


# --- D4 status text ----------------------------------------------------------------------


def test_effective_policy_text_for_every_source() -> None:
    rule_deny = resolve(
        spec(SendRule("deny", channel="discord", chat_type="group")), session_key=DISCORD_GROUP
    )
    assert effective_policy_text(rule_deny) == (
        "⚙️ Send policy: off (rule 1: channel=discord, chatType=group)"
    )
    assert effective_policy_text(resolve(spec(default="allow"))) == ("⚙️ Send policy: on (default)")
    assert effective_policy_text(resolve(spec(default="allow"), override="deny")) == (
        "⚙️ Send policy: off (session override)"
    )
    # D4: nothing configured (or no rule matching) is the built-in default
    assert effective_policy_text(resolve(None)) == "⚙️ Send policy: on (default)"
    assert effective_policy_text(
        resolve(spec(SendRule("deny", channel="slack")), session_key=DISCORD_GROUP)
    ) == ("⚙️ Send policy: on (default)")
