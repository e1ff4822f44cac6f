"""core.model.keys: every key rule of D1 and reference R1, R3.6, plus property tests."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.config.channel_registry import installed_channels
from core.model.delivery_context import REFERENCE_CHANNELS, DeliveryContext
from core.model.key_model import KeyModel
from core.model.keys import (
    DEFAULT_ACCOUNT_ID,
    DEFAULT_AGENT_ID,
    DEFAULT_MAIN_KEY,
    MAX_KEY_LENGTH,
    AnnounceTarget,
    InvalidSessionKey,
    ParsedKey,
    agent_id_of,
    is_key_shaped,
    is_subagent_key,
    is_uuid,
    multiple_sessions_found,
    no_session_found,
    normalize_account_id,
    normalize_agent_id,
    normalize_main_key,
    not_visible_from_sandbox,
    parse_agent_key,
    session_not_found,
)
from core.model.keys import parse_announce_target as parse_with

CHANNELS = installed_channels()
KNOWN_CHANNELS = frozenset(CHANNELS) | REFERENCE_CHANNELS


def parse_announce_target(key: str | None) -> AnnounceTarget | None:
    """R3.6 with the installed channels' declared traits (D94)."""
    return parse_with(key, CHANNELS)


UUID = "aaaaaaaa-aaaa-4aaa-aaaa-aaaaaaaaaaaa"


def test_defaults() -> None:
    assert (DEFAULT_AGENT_ID, DEFAULT_MAIN_KEY, DEFAULT_ACCOUNT_ID) == ("main", "main", "default")


# --- normalisation R1.2 --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Research", "research"),
        ("RESEARCH", "research"),
        ("My Agent!", "my-agent"),
        ("  ops_bot-2 ", "ops_bot-2"),
        ("-lead-", "lead"),
        ("a  b//c", "a-b-c"),
        ("", "main"),
        ("   ", "main"),
        (None, "main"),
        ("!!!", "main"),
        ("ünïcode", "n-code"),
        ("x" * 64, "x" * 64),
        ("X" * 70 + "!", "x" * 64),
    ],
)
def test_normalize_agent_id(raw: str | None, expected: str) -> None:
    assert normalize_agent_id(raw) == expected


def test_normalize_agent_id_long_valid_looking_value_is_cut_to_64() -> None:
    assert normalize_agent_id("a" * 65) == "a" * 64


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Acct-1", "acct-1"),
        (" Work Account ", "work-account"),
        ("", "default"),
        (None, "default"),
        ("***", "default"),
    ],
)
def test_normalize_account_id(raw: str | None, expected: str) -> None:
    assert normalize_account_id(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(" Primary ", "primary"), ("MAIN", "main"), ("", "main"), ("  ", "main"), (None, "main")],
)
def test_normalize_main_key(raw: str | None, expected: str) -> None:
    assert normalize_main_key(raw) == expected


# --- shapes R1.7, R1.9 ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (UUID, True),
        (UUID.upper(), True),
        (f"  {UUID}\n", True),
        (str(uuid.uuid4()), True),
        ("aaaaaaaa-aaaa-4aaa-aaaa-aaaaaaaaaaa", False),
        ("aaaaaaaa-aaaa-4aaa-aaaa-aaaaaaaaaaaaa", False),
        ("gggggggg-aaaa-4aaa-aaaa-aaaaaaaaaaaa", False),
        ("aaaaaaaaaaaa4aaaaaaaaaaaaaaaaaaaaaaa", False),
        (f"subagent:{UUID}", False),
        ("", False),
        (None, False),
    ],
)
def test_is_uuid(value: str | None, expected: bool) -> None:
    assert is_uuid(value) is expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("main", True),
        (" Main ", True),
        ("global", True),
        ("unknown", True),
        ("agent:main:main", True),
        ("Agent:Main:Foo", True),
        ("cron:job-1", True),
        ("hook:x", True),
        ("node-1", True),
        ("node:2", True),
        ("acp:session-1", True),
        ("agent:main:acp:x", True),
        ("discord:group:dev", True),
        ("slack:channel:c1", True),
        ("x:Group:y", True),
        (UUID, False),
        ("test-labeled-session", False),
        (f"subagent:{UUID}", False),
        ("group:dev", False),
        ("primary", False),
        ("nodes", False),
        ("", False),
        ("   ", False),
        (None, False),
    ],
)
def test_is_key_shaped(value: str | None, expected: bool) -> None:
    assert is_key_shaped(value) is expected


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("agent:main:SubAgent:xyz", True),
        (f"agent:research:subagent:{UUID}", True),
        (f"subagent:{UUID}", True),
        ("  SUBAGENT:abc ", True),
        ("agent:main:main", False),
        ("agent:main:dm:subagent:x", False),
        ("agent:subagent:main", False),
        ("subagents:x", False),
        ("agent:main:subagent", False),
        ("", False),
        (None, False),
    ],
)
def test_is_subagent_key(key: str | None, expected: bool) -> None:
    assert is_subagent_key(key) is expected


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("agent:main:main", ParsedKey("main", "main")),
        ("agent:Research:Discord:Group:Dev", ParsedKey("research", "discord:group:dev")),
        (" agent::ops::cron:x ", ParsedKey("ops", "cron:x")),
        ("agent:My Agent!:x", ParsedKey("my-agent", "x")),
        ("agent:main", None),
        ("agent:main:", None),
        ("main", None),
        ("cron:a:b", None),
        ("agents:main:main", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_agent_key(key: str | None, expected: ParsedKey | None) -> None:
    assert parse_agent_key(key) == expected


def test_parsed_key_is_frozen_with_slots() -> None:
    parsed = ParsedKey("main", "main")
    with pytest.raises(AttributeError):
        parsed.agent_id = "x"  # type: ignore[misc]
    assert not hasattr(parsed, "__dict__")


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("agent:Research:main", "research"),
        ("cron:job", "main"),
        ("main", "main"),
        ("global", "main"),
        ("agent:x", "main"),
    ],
)
def test_agent_id_of_counts_bare_keys_as_main(key: str, expected: str) -> None:
    assert agent_id_of(key) == expected


def test_agent_of_uses_configured_default_for_bare_keys() -> None:
    model = KeyModel(default_agent_id="Ops")
    assert model.agent_of("cron:job") == "ops"
    assert model.agent_of("agent:research:main") == "research"
    assert agent_id_of("cron:job") == "main"


# --- main key, canonical, resolve, display R1.2–R1.4 ------------------------------------------


def test_main_session_key() -> None:
    assert KeyModel().main_session_key() == "agent:main:main"
    assert KeyModel(main_key=" Primary ").main_session_key() == "agent:main:primary"
    assert KeyModel(default_agent_id="Ops").main_session_key() == "agent:ops:main"
    assert KeyModel().main_session_key("My Agent!") == "agent:my-agent:main"
    assert KeyModel().main_session_key("  ") == "agent:main:main"
    assert KeyModel(scope="global").main_session_key("research") == "global"


def test_key_model_normalises_its_config() -> None:
    model = KeyModel(main_key="  ", default_agent_id="")
    assert (model.main_key, model.default_agent_id) == ("main", "main")
    with pytest.raises(AttributeError):
        model.extra = 1  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("raw", "agent", "expected"),
    [
        ("main", None, "agent:main:main"),
        (" MAIN ", None, "agent:main:main"),
        ("main", "research", "agent:research:main"),
        ("agent:main:main", "research", "agent:main:main"),
        ("Agent:Research:Main", None, "agent:research:main"),
        ("agent:research", None, "agent:research:main"),
        ("global", None, "global"),
        (" Unknown ", None, "unknown"),
        ("global:", None, "global"),
        ("agent:main:global", None, "agent:main:global"),
        ("cron:job-1", None, "agent:main:cron:job-1"),
        ("cron:job-1", "ops", "agent:ops:cron:job-1"),
        ("hook:abc", None, "agent:main:hook:abc"),
        ("node-1", None, "agent:main:node-1"),
        ("test-labeled-session", None, "agent:main:test-labeled-session"),
        ("discord:group:Dev", None, "agent:main:discord:group:dev"),
        ("group:dev", None, "agent:main:group:dev"),
        ("agent:main:discord:group:dev", "ops", "agent:main:discord:group:dev"),
        ("agent:My Agent!:Slack:Channel:C1", None, "agent:my-agent:slack:channel:c1"),
        ("agent::main::cron:x", None, "agent:main:cron:x"),
        (f"agent:main:subagent:{UUID.upper()}", None, f"agent:main:subagent:{UUID}"),
        ("agent", None, "agent:main:agent"),
        ("a::b:", None, "agent:main:a:b"),
        (" a : b ", None, "agent:main:a:b"),
        ("agent: Ops :  Cron : x", None, "agent:ops:cron:x"),
        ("x:\t:y", None, "agent:main:x:y"),
        ("alice smith", None, "agent:main:alice smith"),
    ],
)
def test_canonical(raw: str, agent: str | None, expected: str) -> None:
    assert KeyModel().canonical(raw, agent) == expected


def test_canonical_uses_default_agent_for_bare_keys() -> None:
    model = KeyModel(default_agent_id="Ops")
    assert model.canonical("main") == "agent:ops:main"
    assert model.canonical("cron:x") == "agent:ops:cron:x"
    assert model.canonical("cron:x", "research") == "agent:research:cron:x"


@pytest.mark.parametrize(
    "raw", ["main", "primary", " PRIMARY ", "agent:main:main", "agent:main:primary"]
)
def test_canonical_main_aliases_with_custom_main_key(raw: str) -> None:
    assert KeyModel(main_key=" Primary ").canonical(raw) == "agent:main:primary"


def test_canonical_other_agent_alias_with_custom_main_key() -> None:
    assert KeyModel(main_key="primary").canonical("agent:ops:main") == "agent:ops:primary"


@pytest.mark.parametrize("raw", ["main", "agent:main:main", "agent:ops:main", "global", "agent:x"])
def test_canonical_global_scope_aliases_main_to_global(raw: str) -> None:
    assert KeyModel(scope="global").canonical(raw) == "global"


def test_canonical_global_scope_leaves_other_keys() -> None:
    model = KeyModel(scope="global")
    assert model.canonical("discord:group:dev") == "agent:main:discord:group:dev"
    assert model.canonical("unknown") == "unknown"


@pytest.mark.parametrize("raw", ["", "   ", ":", " :: ", "\n", ": :", "\t:\n: "])
def test_canonical_rejects_empty_keys(raw: str) -> None:
    with pytest.raises(InvalidSessionKey, match=r"^invalid session key"):
        KeyModel().canonical(raw)
    assert issubclass(InvalidSessionKey, ValueError)


def test_canonical_keys_are_at_most_256_characters() -> None:
    """D12: the limit lives here, so every caller of the key module gets it."""
    model = KeyModel()
    longest = "agent:main:" + "x" * (MAX_KEY_LENGTH - len("agent:main:"))
    assert MAX_KEY_LENGTH == 256
    assert model.canonical(longest) == longest
    assert model.canonical("x" * (256 - 11)) == longest
    for raw in (longest + "y", "x" * 246, "agent:ops:" + "z" * 300, "a:" * 200):
        with pytest.raises(InvalidSessionKey, match=r"^invalid session key: longer than 256"):
            model.canonical(raw)
    with pytest.raises(InvalidSessionKey):
        model.resolve_input("q" * 1000, "main")


@pytest.mark.parametrize(
    ("raw", "requester", "expected"),
    [
        ("main", "main", "agent:main:main"),
        ("main", "research", "agent:research:main"),
        (" Main ", "Research", "agent:research:main"),
        ("agent:main:main", "research", "agent:main:main"),
        ("test-labeled-session", "main", "agent:main:test-labeled-session"),
        ("cron:nightly", "research", "agent:research:cron:nightly"),
        ("agent:main:discord:group:dev", "research", "agent:main:discord:group:dev"),
        (UUID, "main", f"agent:main:{UUID}"),
    ],
)
def test_resolve_input(raw: str, requester: str, expected: str) -> None:
    assert KeyModel().resolve_input(raw, requester) == expected


def test_resolve_input_main_with_custom_main_key_case_2() -> None:
    assert KeyModel(main_key=" Primary ").resolve_input("main", "main") == "agent:main:primary"


def test_resolve_input_global_scope() -> None:
    model = KeyModel(scope="global")
    assert model.resolve_input("main", "research") == "global"
    assert model.resolve_input("global", "main") == "global"


@pytest.mark.parametrize(
    ("key", "requester", "expected"),
    [
        ("agent:main:main", "main", "main"),
        ("agent:research:main", "research", "main"),
        ("agent:research:main", "main", "agent:research:main"),
        ("agent:main:main", "research", "agent:main:main"),
        ("agent:main:cron:x", "main", "agent:main:cron:x"),
        ("agent:main:discord:channel:123", "main", "agent:main:discord:channel:123"),
        ("global", "main", "global"),
        ("unknown", "main", "unknown"),
        ("", "main", ""),
    ],
)
def test_display(key: str, requester: str, expected: str) -> None:
    assert KeyModel().display(key, requester) == expected


def test_display_custom_main_key() -> None:
    model = KeyModel(main_key="primary")
    assert model.display("agent:main:primary", "main") == "main"
    assert model.display("agent:ops:primary", "main") == "agent:ops:primary"


def test_display_global_scope_hides_global_case_3() -> None:
    model = KeyModel(scope="global")
    assert model.display("global", "main") == "main"
    assert model.display("global", "research") == "main"
    assert model.display("unknown", "main") == "unknown"
    assert model.kind("global") == "main"


# --- kind R1.5, D1 ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("agent:main:main", "main"),
        ("main", "main"),
        ("agent:research:main", "main"),
        ("agent:x", "main"),
        ("cron:job-1", "cron"),
        ("agent:main:cron:nightly", "cron"),
        ("hook:x", "hook"),
        ("agent:main:hook:abc", "hook"),
        ("node-1", "node"),
        ("node:2", "node"),
        ("agent:main:node-1", "node"),
        ("agent:main:node:2", "node"),
        ("agent:main:discord:group:dev", "group"),
        ("agent:main:slack:channel:c1", "group"),
        ("agent:main:telegram:group:-100:topic:5", "group"),
        ("agent:main:discord:channel:1:thread:2", "group"),
        ("discord:group:dev", "group"),
        ("group:dev", "group"),
        ("agent:main:channel:x", "group"),
        ("Agent:Main:Discord:GROUP:Dev", "group"),
        ("agent:main:subagent:abc", "other"),
        (f"agent:main:subagent:{UUID}", "other"),
        ("agent:main:dm:alice", "other"),
        ("agent:main:telegram:dm:123", "other"),
        ("agent:main:telegram:default:dm:123", "other"),
        ("agent:main:test-labeled-session", "other"),
        ("agent:main:cronjob", "other"),
        ("agent:main:nodes", "other"),
        ("agent:main:groups", "other"),
        ("agent:main:main:extra", "other"),
        ("agent:main:cron:x:group:y", "cron"),
        ("global", "other"),
        (" Global : ", "other"),
        ("unknown", "other"),
        ("", "other"),
        (" : ", "other"),
    ],
)
def test_kind(key: str, expected: str) -> None:
    assert KeyModel().kind(key) == expected


def test_kind_acceptance_case_6_bare_keys() -> None:
    model = KeyModel()
    keys = [
        "hook:x",
        "node-1",
        "node:2",
        "agent:main:discord:group:dev",
        "agent:main:slack:channel:c1",
        "agent:main:subagent:abc",
    ]
    assert [model.kind(k) for k in keys] == ["hook", "node", "node", "group", "group", "other"]


def test_kind_custom_main_key() -> None:
    model = KeyModel(main_key="primary")
    assert model.kind("agent:main:primary") == "main"
    assert model.kind("primary") == "main"
    assert model.kind("agent:main:main") == "main"
    assert model.kind("agent:main:secondary") == "other"


def test_kind_global_scope() -> None:
    assert KeyModel(scope="global").kind("global") == "main"
    assert KeyModel(scope="global").kind(" GLOBAL: ") == "main"
    assert KeyModel(scope="global").kind("unknown") == "other"


# --- channel_of R1.6 -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("agent:main:discord:group:dev", "discord"),
        ("agent:main:slack:channel:c1:thread:1.2", "slack"),
        ("discord:group:dev", "discord"),
        ("agent:main:telegram:dm:123", "telegram"),
        ("agent:main:telegram:acct:dm:123", "telegram"),
        ("agent:main:imsg:group:x", "imessage"),
        ("agent:main:dm:alice", None),
        ("group:dev", None),
        ("agent:main:main", None),
        ("agent:main:cron:x", None),
        ("agent:main:hook:x", None),
        ("agent:main:node-x", None),
        (f"agent:main:subagent:{UUID}", None),
        ("agent:main:test-labeled-session", None),
        ("global", None),
    ],
)
def test_channel_of(key: str, expected: str | None) -> None:
    assert KeyModel().channel_of(key) == expected


# --- builders R1.1 ---------------------------------------------------------------------------


def test_dm_key_main_scope_collapses_to_main() -> None:
    model = KeyModel(main_key="Primary")
    assert model.dm_key("main", "telegram", "123") == "agent:main:primary"
    assert model.dm_key("Research", "discord", "9", "acct") == "agent:research:primary"
    assert model.dm_key(None, "telegram", "1") == "agent:main:primary"
    assert KeyModel(scope="global").dm_key("main", "telegram", "1") == "global"


@pytest.mark.parametrize(
    ("scope", "expected"),
    [
        ("per-peer", "agent:ops:dm:u123"),
        ("per-channel-peer", "agent:ops:slack:dm:u123"),
        ("per-account-channel-peer", "agent:ops:slack:work-space:dm:u123"),
    ],
)
def test_dm_key_scopes(scope: str, expected: str) -> None:
    model = KeyModel(dm_scope=scope)  # type: ignore[arg-type]
    assert model.dm_key("Ops", " Slack ", " U123 ", "Work Space") == expected


def test_dm_key_defaults_and_aliases() -> None:
    model = KeyModel(dm_scope="per-account-channel-peer", default_agent_id="ops")
    assert model.dm_key(None, "IMSG", "+1555") == "agent:ops:imessage:default:dm:+1555"
    assert model.dm_key("", " ", " ") == "agent:ops:unknown:default:dm:unknown"
    assert model.dm_key("main", "gchat", "u", "") == "agent:main:googlechat:default:dm:u"


def test_dm_key_escapes_colons_in_peer_ids() -> None:
    model = KeyModel(dm_scope="per-peer")
    key = model.dm_key("main", "webchat", "group:x:thread:1")
    assert key == "agent:main:dm:group%3ax%3athread%3a1"
    assert model.kind(key) == "other"
    assert model.dm_key("main", "webchat", "50%") == "agent:main:dm:50%25"


def test_dm_key_identity_links() -> None:
    links = {" Alice ": ["telegram:123", "Discord:987", "U55"], "": ["slack:u1"]}
    model = KeyModel(dm_scope="per-channel-peer", identity_links=links)
    assert model.dm_key("main", "telegram", "123") == "agent:main:telegram:dm:alice"
    assert model.dm_key("main", "discord", " 987 ") == "agent:main:discord:dm:alice"
    assert model.dm_key("main", "slack", "u55") == "agent:main:slack:dm:alice"
    assert model.dm_key("main", "discord", "123") == "agent:main:discord:dm:123"
    assert model.dm_key("main", "slack", "u1") == "agent:main:slack:dm:u1"
    per_peer = KeyModel(dm_scope="per-peer", identity_links=links)
    assert per_peer.dm_key("main", "telegram", "123") == per_peer.dm_key("main", "discord", "987")
    assert KeyModel(identity_links=links).dm_key("main", "telegram", "123") == "agent:main:main"


def test_dm_key_identity_link_first_name_wins() -> None:
    model = KeyModel(dm_scope="per-peer", identity_links={"a": ["x:1"], "b": ["x:1"]})
    assert model.dm_key("main", "x", "1") == "agent:main:dm:a"


@pytest.mark.parametrize(
    ("args", "kwargs", "expected"),
    [
        (("main", "discord", "group", "Dev"), {}, "agent:main:discord:group:dev"),
        (("Ops", "Slack", "channel", "C01ABC"), {}, "agent:ops:slack:channel:c01abc"),
        (
            ("main", "telegram", "group", "-100123", 42),
            {"topic": True},
            "agent:main:telegram:group:-100123:topic:42",
        ),
        (("main", "discord", "channel", "1", "777"), {}, "agent:main:discord:channel:1:thread:777"),
        (
            ("main", "slack", "channel", "C1", "1700.55"),
            {},
            "agent:main:slack:channel:c1:thread:1700.55",
        ),
        (("main", "discord", "group", "1", " "), {}, "agent:main:discord:group:1"),
        (("main", "discord", "group", "1", 0), {}, "agent:main:discord:group:1:thread:0"),
        ((None, "gchat", "group", " "), {}, "agent:main:googlechat:group:unknown"),
        (("main", "x", "group", "a:b"), {}, "agent:main:x:group:a%3ab"),
    ],
)
def test_group_key(args: tuple[object, ...], kwargs: dict[str, bool], expected: str) -> None:
    key = KeyModel().group_key(*args, **kwargs)  # type: ignore[arg-type]
    assert key == expected
    assert KeyModel().kind(key) == "group"


def test_group_key_rejects_other_chat_types() -> None:
    with pytest.raises(InvalidSessionKey):
        KeyModel().group_key("main", "discord", "direct", "1")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("agent", "prefix"),
    [
        ("RESEARCH", "agent:research:subagent:"),
        ("My Agent!", "agent:my-agent:subagent:"),
        (None, "agent:ops:subagent:"),
    ],
)
def test_subagent_key_cases_11_12(agent: str | None, prefix: str) -> None:
    model = KeyModel(default_agent_id="ops")
    key = model.subagent_key(agent)
    assert key.startswith(prefix)
    child = uuid.UUID(key.removeprefix(prefix))
    assert child.version == 4
    assert is_subagent_key(key)
    assert model.kind(key) == "other"
    assert model.subagent_key(agent) != key


def test_cron_hook_node_keys() -> None:
    model = KeyModel()
    assert model.cron_key("Ops", " Nightly ") == "agent:ops:cron:nightly"
    assert model.kind(model.cron_key("main", "j")) == "cron"
    assert model.hook_key("main", "GitHub") == "agent:main:hook:github"
    hook = model.hook_key("main")
    assert uuid.UUID(hook.removeprefix("agent:main:hook:")).version == 4
    assert model.kind(hook) == "hook"
    assert model.node_key("main", "Pi-1") == "agent:main:node-pi-1"
    assert model.kind(model.node_key("main", "x")) == "node"


@pytest.mark.parametrize("call", ["cron", "node"])
def test_cron_and_node_keys_need_an_id(call: str) -> None:
    model = KeyModel()
    with pytest.raises(InvalidSessionKey, match="required"):
        if call == "cron":
            model.cron_key("main", "  ")
        else:
            model.node_key("main", "")


# --- announce target R3.6 --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("agent:main:discord:group:dev", AnnounceTarget("discord", "channel:dev")),
        ("agent:main:discord:channel:123", AnnounceTarget("discord", "channel:123")),
        ("agent:main:slack:group:g1", AnnounceTarget("slack", "channel:g1")),
        (
            "agent:main:slack:channel:c1:thread:1700000000.123456",
            AnnounceTarget("slack", "channel:c1", "1700000000.123456"),
        ),
        (
            "agent:main:telegram:group:-100123:topic:42",
            AnnounceTarget("telegram", "group:-100123", "42"),
        ),
        ("agent:main:telegram:channel:-100", AnnounceTarget("telegram", "channel:-100")),
        ("agent:main:whatsapp:group:123@g.us", AnnounceTarget("whatsapp", "group:123@g.us")),
        ("agent:main:signal:group:abc:thread:7", AnnounceTarget("signal", "group:abc", "7")),
        ("agent:main:imsg:group:chat1", AnnounceTarget("imessage", "group:chat1")),
        ("agent:main:google-chat:channel:spaces", AnnounceTarget("googlechat", "channel:spaces")),
        ("agent:main:irc:group:room", AnnounceTarget("irc", "room")),
        ("agent:main:IRC:channel:room:topic:3", AnnounceTarget("irc", "room", "3")),
        ("discord:group:dev", AnnounceTarget("discord", "channel:dev")),
        (
            "agent:main:discord:group:dev:thread:abc",
            AnnounceTarget("discord", "channel:dev:thread:abc"),
        ),
        ("agent:main:discord:group:a:b", AnnounceTarget("discord", "channel:a:b")),
        ("agent:main:discord:group:topic:5", AnnounceTarget("discord", "channel:topic:5")),
        ("agent:main:main", None),
        ("main", None),
        ("agent:main:telegram:dm:123", None),
        ("agent:main:group:dev", None),
        ("agent:main:discord:group", None),
        ("discord:group:", None),
        ("agent:main:discord:dm:group:x", None),
        (f"agent:main:subagent:{UUID}", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_announce_target(key: str | None, expected: AnnounceTarget | None) -> None:
    assert parse_announce_target(key) == expected


def test_announce_target_as_delivery_context() -> None:
    target = parse_announce_target("agent:main:telegram:group:-1:topic:9")
    assert target is not None
    assert target.as_delivery_context() == DeliveryContext(
        channel="telegram", to="group:-1", thread_id="9"
    )


def test_announce_target_round_trips_group_keys() -> None:
    model = KeyModel()
    key = model.group_key("main", "telegram", "group", "-100", 12, topic=True)
    assert parse_announce_target(key) == AnnounceTarget("telegram", "group:-100", "12")


# --- error texts R1.7 ------------------------------------------------------------------------


def test_error_texts() -> None:
    assert no_session_found(UUID) == f"No session found: {UUID}"
    assert multiple_sessions_found("s1", ["agent:main:a", "agent:main:b"]) == (
        "Multiple sessions found for sessionId: s1 (agent:main:a, agent:main:b)"
    )
    assert session_not_found("x") == (
        "Session not found: x (use the full sessionKey from sessions_list)"
    )
    assert not_visible_from_sandbox("agent:main:main") == (
        "Session not visible from this sandboxed agent session: agent:main:main"
    )


# --- properties -------------------------------------------------------------------------------

MAIN_KEYS = st.sampled_from(["main", "primary", " Home "])
AGENTS = st.sampled_from(["main", "research", "ops", "My Agent!"])
MODELS = st.builds(
    KeyModel,
    main_key=MAIN_KEYS,
    scope=st.sampled_from(["per-sender", "global"]),
    default_agent_id=AGENTS,
    dm_scope=st.sampled_from(["main", "per-peer", "per-channel-peer", "per-account-channel-peer"]),
)
SEGMENT = st.text(min_size=1, max_size=12).filter(lambda s: s.strip(": \t\n") != "")
RAW_KEYS = st.one_of(
    st.text(max_size=40),
    st.text(alphabet=st.sampled_from(" \t\n:aA-İ"), max_size=12),
    st.lists(SEGMENT, min_size=1, max_size=5).map(":".join),
    st.tuples(AGENTS, st.lists(SEGMENT, max_size=4)).map(
        lambda t: ":".join(["agent", t[0], *t[1]])
    ),
    st.sampled_from(
        [
            "main",
            "global",
            "unknown",
            "Main",
            "primary",
            "agent:main:main",
            "cron:x",
            "hook:y",
            "node-1",
            "discord:group:dev",
        ]
    ),
)
SAFE_CHANNEL = st.one_of(
    st.sampled_from(sorted(KNOWN_CHANNELS)),
    st.from_regex(r"\A[a-z][a-z0-9]{0,10}\Z").filter(
        lambda c: not c.startswith(("cron", "hook", "node"))
    ),
)


def _canonical_or_none(model: KeyModel, raw: str, agent: str | None) -> str | None:
    try:
        return model.canonical(raw, agent)
    except InvalidSessionKey:
        return None


@settings(max_examples=300)
@given(MODELS, RAW_KEYS, st.none() | AGENTS)
def test_canonical_is_idempotent_lowercase_and_trimmed(
    model: KeyModel, raw: str, agent: str | None
) -> None:
    key = _canonical_or_none(model, raw, agent)
    if key is None:
        assert not [p for p in raw.split(":") if p.strip()]
        return
    assert model.canonical(key) == key
    assert model.canonical(key, "someone-else") == key
    assert key == key.lower() == key.strip()
    assert all(seg and seg == seg.strip() for seg in key.split(":"))
    assert key in ("global", "unknown") or parse_agent_key(key) is not None


@settings(max_examples=300)
@given(MODELS, RAW_KEYS, st.none() | AGENTS, AGENTS)
def test_display_round_trips_through_resolve_input(
    model: KeyModel, raw: str, owner: str | None, requester: str
) -> None:
    key = _canonical_or_none(model, raw, owner)
    if key is None:
        return
    shown = model.display(key, requester)
    assert model.resolve_input(shown, requester) == key
    own_main = model.main_session_key(requester)
    assert (shown == "main") is (key == own_main)


@given(MODELS, AGENTS, AGENTS)
def test_main_keys_round_trip_for_own_and_other_agents(
    model: KeyModel, owner: str, requester: str
) -> None:
    key = model.main_session_key(owner)
    shown = model.display(key, requester)
    assert model.resolve_input(shown, requester) == key
    assert model.kind(key) == "main"


@given(
    MODELS,
    st.none() | AGENTS,
    SAFE_CHANNEL,
    st.sampled_from(["group", "channel"]),
    st.text(max_size=20),
    st.none() | st.text(max_size=10) | st.integers(),
    st.booleans(),
)
def test_group_keys_are_groups(
    model: KeyModel,
    agent: str | None,
    channel: str,
    chat_type: str,
    chat_id: str,
    thread: str | int | None,
    topic: bool,
) -> None:
    key = model.group_key(agent, channel, chat_type, chat_id, thread, topic=topic)  # type: ignore[arg-type]
    assert model.kind(key) == "group"
    assert model.canonical(key) == key
    assert model.channel_of(key) == channel
    assert not is_subagent_key(key)
    target = parse_announce_target(key)
    assert target is not None and target.channel == channel


@given(
    st.sampled_from(["per-peer", "per-channel-peer", "per-account-channel-peer"]),
    st.none() | AGENTS,
    SAFE_CHANNEL,
    st.text(max_size=20),
    st.none() | st.text(max_size=10),
)
def test_dm_keys_are_other(
    dm_scope: str, agent: str | None, channel: str, peer: str, account: str | None
) -> None:
    model = KeyModel(dm_scope=dm_scope)  # type: ignore[arg-type]
    key = model.dm_key(agent, channel, peer, account)
    assert model.kind(key) == "other"
    assert model.canonical(key) == key
    assert not is_subagent_key(key)
    assert parse_announce_target(key) is None
    expected_channel = None if dm_scope == "per-peer" else channel
    assert model.channel_of(key) == expected_channel


@given(MODELS, st.none() | AGENTS)
def test_subagent_keys_detected(model: KeyModel, agent: str | None) -> None:
    key = model.subagent_key(agent)
    assert is_subagent_key(key)
    assert is_subagent_key(key.upper())
    assert model.kind(key) == "other"
    assert model.canonical(key) == key
    assert agent_id_of(key) == normalize_agent_id(agent or model.default_agent_id)


@given(st.text(max_size=80))
def test_normalized_ids_match_the_id_pattern(raw: str) -> None:
    for value in (normalize_agent_id(raw), normalize_account_id(raw)):
        assert 1 <= len(value) <= 64
        assert value == value.lower()
        assert all(c.isascii() and (c.isalnum() or c in "-_") for c in value)
        assert normalize_agent_id(value) == value


def test_the_known_channels_are_the_installed_ones_and_the_references() -> None:
    """Every channel R3.6 knows is an installed spec (D94) or one we do not ship."""
    assert {"telegram", "discord", "slack", "webchat", "whatsapp", "signal"} <= set(CHANNELS)
    assert {name for name, spec in CHANNELS.items() if spec.group_target == "channel"} >= {
        "discord",
        "slack",
    }


def test_a_channel_nobody_declares_is_addressed_by_its_bare_id() -> None:
    assert parse_with("agent:main:discord:group:dev", {}) == AnnounceTarget("discord", "dev")


def test_the_key_model_reads_the_declared_traits() -> None:
    model = KeyModel(channels=CHANNELS, dm_scope="per-peer")
    assert model.announce_target("agent:main:slack:group:g1") == AnnounceTarget(
        "slack", "channel:g1"
    )
    assert model.inbound_key(None, "webchat", "direct", "anyone") == "agent:main:main"
    assert model.inbound_key(None, "telegram", "direct", "42") != "agent:main:main"
    assert KeyModel(dm_scope="per-peer").inbound_key(None, "webchat", "direct", "x") != (
        "agent:main:main"
    )
