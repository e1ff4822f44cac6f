"""core.model.delivery_context: reference [6] and acceptance cases 143–150."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from core.model.delivery_context import (
    REFERENCE_CHANNELS,
    DeliveryContext,
    delivery_context_key,
    merge_delivery_context,
    normalize_channel,
    normalize_delivery_context,
    session_delivery_fields,
)


def ctx(**fields: Any) -> DeliveryContext:
    return DeliveryContext.model_validate(fields)


# --- channel ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (" WhatsApp ", "whatsapp"),
        ("IMSG", "imessage"),
        ("imessage", "imessage"),
        ("google-chat", "googlechat"),
        (" GChat ", "googlechat"),
        ("webchat", "webchat"),
        ("Matrix", "matrix"),
        ("", None),
        ("   ", None),
        (None, None),
        (42, None),
    ],
)
def test_normalize_channel(raw: object, expected: str | None) -> None:
    assert normalize_channel(raw) == expected


def test_the_reference_channels_we_do_not_ship() -> None:
    """R3.6's known channels are the installed specs (D94) plus these two."""
    assert {"imessage", "googlechat"} == REFERENCE_CHANNELS


# --- model ------------------------------------------------------------------------------------


def test_model_accepts_names_and_aliases_and_normalises() -> None:
    by_name = DeliveryContext(
        channel=" Slack ", to=" channel:C1 ", account_id=" a ", thread_id=" 7 "
    )
    by_alias = DeliveryContext.model_validate(
        {"channel": "slack", "to": "channel:C1", "accountId": "a", "threadId": "7"}
    )
    assert by_name == by_alias
    assert by_name.to == "channel:C1"
    assert by_name.account_id == "a"


def test_model_is_frozen() -> None:
    context = DeliveryContext(channel="slack")
    with pytest.raises(ValidationError):
        context.channel = "discord"


def test_model_serialises_camel_case_without_nulls() -> None:
    context = DeliveryContext(channel="slack", to="channel:C1", account_id="acct", thread_id=5)
    assert context.model_dump() == {
        "channel": "slack",
        "to": "channel:C1",
        "accountId": "acct",
        "threadId": 5,
    }
    assert json.loads(DeliveryContext(channel="slack").model_dump_json()) == {"channel": "slack"}
    assert DeliveryContext().model_dump() == {}


def test_model_ignores_unknown_fields() -> None:
    assert ctx(channel="slack", lastTo="x") == DeliveryContext(channel="slack")


# --- normalize_delivery_context ------------------------------------------------------------------


def test_case_143_trims_everything() -> None:
    result = normalize_delivery_context(
        {"channel": " whatsapp ", "to": " +1555 ", "accountId": " acct-1 "}
    )
    assert result == DeliveryContext(channel="whatsapp", to="+1555", account_id="acct-1")
    assert result is not None and result.model_dump() == {
        "channel": "whatsapp",
        "to": "+1555",
        "accountId": "acct-1",
    }


@pytest.mark.parametrize(
    "value",
    [
        None,
        {},
        {"channel": "  "},
        {"to": " ", "accountId": "", "threadId": "  "},
        {"threadId": math.nan},
        {"threadId": math.inf},
        {"threadId": True},
        {"channel": 3},
        DeliveryContext(),
    ],
)
def test_case_144_empty_is_none(value: Any) -> None:
    assert normalize_delivery_context(value) is None


def test_to_and_account_keep_case() -> None:
    result = normalize_delivery_context(
        {"channel": "SLACK", "to": "channel:C0AB", "accountId": "T1"}
    )
    assert result == DeliveryContext(channel="slack", to="channel:C0AB", account_id="T1")


@pytest.mark.parametrize(
    ("thread", "expected"),
    [
        (42.9, 42),
        (-1.5, -1),
        (0, 0),
        (7, 7),
        (" 999 ", "999"),
        ("123.456", "123.456"),
        (0.0, 0),
        ("", None),
        (None, None),
        (False, None),
        ([1], None),
    ],
)
def test_case_150_thread_id(thread: Any, expected: str | int | None) -> None:
    result = normalize_delivery_context({"channel": "telegram", "threadId": thread})
    assert result is not None
    assert result.thread_id == expected
    assert type(result.thread_id) is type(expected)


def test_case_150_imsg_alias() -> None:
    assert normalize_delivery_context({"channel": "IMSG"}) == DeliveryContext(channel="imessage")


def test_normalize_accepts_a_model_and_snake_case_mapping() -> None:
    model = DeliveryContext(channel="discord", to="channel:1")
    assert normalize_delivery_context(model) is model
    assert normalize_delivery_context({"channel": "discord", "account_id": "x"}) == (
        DeliveryContext(channel="discord", account_id="x")
    )


# --- merge ------------------------------------------------------------------------------------


def test_case_145_primary_wins_field_by_field() -> None:
    merged = merge_delivery_context(
        {"channel": "whatsapp", "to": "channel:abc"},
        {"channel": "slack", "to": "channel:def", "accountId": "acct"},
    )
    assert merged == DeliveryContext(channel="whatsapp", to="channel:abc", account_id="acct")


def test_merge_edge_cases() -> None:
    assert merge_delivery_context(None, None) is None
    assert merge_delivery_context({"channel": " "}, {}) is None
    fallback = DeliveryContext(channel="slack", to="c")
    assert merge_delivery_context(None, fallback) == fallback
    assert merge_delivery_context({"channel": " Slack "}, None) == DeliveryContext(channel="slack")
    assert merge_delivery_context({"to": "  "}, {"to": "x"}) == DeliveryContext(to="x")
    assert merge_delivery_context({"threadId": 0}, {"threadId": 5}) == DeliveryContext(thread_id=0)


# --- key --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"channel": "whatsapp", "to": "+1555"}, "whatsapp|+1555||"),
        ({"channel": "whatsapp", "to": "+1555", "accountId": "acct-1"}, "whatsapp|+1555|acct-1|"),
        (
            {"channel": "slack", "to": "channel:C1", "threadId": "123.456"},
            "slack|channel:C1||123.456",
        ),
        ({"channel": " Slack ", "to": " channel:C1 ", "threadId": 0}, "slack|channel:C1||0"),
        ({"channel": "telegram", "to": "1", "accountId": "a", "threadId": 9.7}, "telegram|1|a|9"),
        ({"channel": "whatsapp"}, None),
        ({"to": "+1555"}, None),
        (None, None),
    ],
)
def test_case_146_delivery_context_key(value: Any, expected: str | None) -> None:
    assert delivery_context_key(value) == expected


# --- session fields ---------------------------------------------------------------------------


def test_case_147_last_channel_beats_entry_channel() -> None:
    result = session_delivery_fields(
        channel="webchat",
        last_channel=" whatsapp ",
        last_to=" +1777 ",
        last_account_id=" acct-9 ",
        last_thread_id=None,
        delivery_context=None,
    )
    assert result == DeliveryContext(channel="whatsapp", to="+1777", account_id="acct-9")


def test_case_148_entry_channel_fills_in() -> None:
    result = session_delivery_fields(
        channel="telegram",
        last_channel=None,
        last_to=" 123 ",
        last_account_id=None,
        last_thread_id=" 999 ",
        delivery_context=None,
    )
    assert result == DeliveryContext(channel="telegram", to="123", thread_id="999")


def test_case_149_last_fields_win_over_stale_context() -> None:
    result = session_delivery_fields(
        last_channel=" whatsapp ",
        last_to=" +1555 ",
        last_account_id=None,
        last_thread_id=None,
        channel=None,
        delivery_context={
            "channel": " Slack ",
            "to": " channel:1 ",
            "accountId": " acct-2 ",
            "threadId": " 444 ",
        },
    )
    assert result == DeliveryContext(
        channel="whatsapp", to="+1555", account_id="acct-2", thread_id="444"
    )


def test_missing_last_fields_come_from_context() -> None:
    result = session_delivery_fields(
        delivery_context=DeliveryContext(channel="discord", to="channel:9", account_id="bot"),
    )
    assert result == DeliveryContext(channel="discord", to="channel:9", account_id="bot")


def test_context_channel_beats_entry_origin_channel() -> None:
    result = session_delivery_fields(
        channel="webchat",
        delivery_context={"channel": "slack", "to": "channel:C1"},
    )
    assert result == DeliveryContext(channel="slack", to="channel:C1")


def test_blank_last_channel_counts_as_missing() -> None:
    result = session_delivery_fields(channel="telegram", last_channel="  ", last_to="5")
    assert result == DeliveryContext(channel="telegram", to="5")


def test_session_fields_all_empty() -> None:
    assert session_delivery_fields() is None
    assert session_delivery_fields(last_to=" ", delivery_context={"channel": ""}) is None


# --- properties -------------------------------------------------------------------------------

TEXT = st.none() | st.text(max_size=12) | st.sampled_from([" IMSG ", "gchat", "Slack", ""])
THREAD = st.none() | st.text(max_size=8) | st.integers() | st.floats(allow_nan=True)
RAW_CONTEXT = st.fixed_dictionaries(
    {}, optional={"channel": TEXT, "to": TEXT, "accountId": TEXT, "threadId": THREAD}
)


@given(RAW_CONTEXT)
def test_normalize_is_idempotent(raw: dict[str, Any]) -> None:
    once = normalize_delivery_context(raw)
    if once is None:
        return
    assert normalize_delivery_context(once) == once
    assert normalize_delivery_context(once.model_dump()) == once
    assert normalize_delivery_context(json.loads(once.model_dump_json())) == once
    for value in (once.channel, once.to, once.account_id):
        assert value is None or (value and value == value.strip())
    assert once.channel is None or once.channel == once.channel.lower()
    assert once.thread_id is None or isinstance(once.thread_id, int) or once.thread_id.strip()


@given(RAW_CONTEXT, RAW_CONTEXT)
def test_merge_prefers_primary(primary: dict[str, Any], fallback: dict[str, Any]) -> None:
    merged = merge_delivery_context(primary, fallback)
    first = normalize_delivery_context(primary)
    second = normalize_delivery_context(fallback)
    if first is None and second is None:
        assert merged is None
        return
    assert merged is not None
    for field in ("channel", "to", "account_id", "thread_id"):
        mine = getattr(first, field, None)
        expected = mine if mine is not None else getattr(second, field, None)
        assert getattr(merged, field) == expected
    assert merge_delivery_context(merged, None) == merged
