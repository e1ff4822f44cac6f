"""core.model.key_model: the main key, canonical form, resolve_input and display (R1.2–R1.4),
kind (R1.5, D1) and channel_of (R1.6)."""

from __future__ import annotations

import pytest

from core.model.key_model import KeyModel
from core.model.keys import (
    MAX_KEY_LENGTH,
    InvalidSessionKey,
)

UUID = "aaaaaaaa-aaaa-4aaa-aaaa-aaaaaaaaaaaa"


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
