"""core.model.keys and core.model.key_model: property tests (hypothesis) of the canonical form,
display and resolve_input, the builders and the normalised ids."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from core.config.channel_registry import installed_channels
from core.model.delivery_context import REFERENCE_CHANNELS
from core.model.key_model import KeyModel
from core.model.keys import (
    InvalidSessionKey,
    agent_id_of,
    is_subagent_key,
    normalize_account_id,
    normalize_agent_id,
    parse_agent_key,
    parse_announce_target,
)

CHANNELS = installed_channels()
KNOWN_CHANNELS = frozenset(CHANNELS) | REFERENCE_CHANNELS


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
    target = parse_announce_target(key, CHANNELS)
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
    assert parse_announce_target(key, CHANNELS) is None
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
