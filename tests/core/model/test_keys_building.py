"""core.model.key_model and core.model.keys: building keys (R1.1), the announce target a key
names (R3.6) and the installed channels' declared traits it reads (D94)."""

from __future__ import annotations

import uuid

import pytest

from core.config.channel_registry import installed_channels
from core.model.delivery_context import DeliveryContext
from core.model.key_model import KeyModel
from core.model.keys import (
    AnnounceTarget,
    InvalidSessionKey,
    is_subagent_key,
)
from core.model.keys import parse_announce_target as parse_with

CHANNELS = installed_channels()
UUID = "aaaaaaaa-aaaa-4aaa-aaaa-aaaaaaaaaaaa"


def parse_announce_target(key: str | None) -> AnnounceTarget | None:
    """R3.6 with the installed channels' declared traits (D94)."""
    return parse_with(key, CHANNELS)


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
