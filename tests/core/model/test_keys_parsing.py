"""core.model.keys: reading keys (D1, R1): the defaults, normalised ids (R1.2), what a key is
shaped like and what it parses to (R1.7, R1.9), and the error texts (R1.7)."""

from __future__ import annotations

import uuid

import pytest

from core.model.key_model import KeyModel
from core.model.keys import (
    DEFAULT_ACCOUNT_ID,
    DEFAULT_AGENT_ID,
    DEFAULT_MAIN_KEY,
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
