"""Command parsing and ``/send`` tokens: R5.4, D4, cases 133–140."""

from __future__ import annotations

import pytest

from core.features.commands.parse import (
    SEND_OWNER_ONLY,
    SEND_USAGE,
    ParsedCommand,
    is_send_command,
    parse_command,
    parse_send_mode,
    send_set_text,
)


def send_mode(text: str, **kwargs: object) -> object:
    """What the router would do: "agent" for non-/send text, else the parsed mode."""
    parsed = parse_command(text, **kwargs)  # type: ignore[arg-type]
    if not is_send_command(parsed):
        return "agent"
    assert parsed is not None
    return parse_send_mode(parsed.args)


# --- parse_command -------------------------------------------------------------------------


def test_basic_command() -> None:
    assert parse_command("/send off") == ParsedCommand("send", "off", "/send off")


def test_text_without_slash_is_not_a_command() -> None:
    assert parse_command("send on") is None
    assert parse_command("hello /send on") is None
    assert parse_command("") is None
    assert parse_command("   ") is None


def test_surrounding_whitespace_is_trimmed_and_raw_is_kept() -> None:
    parsed = parse_command("  /Send   ON  ")
    assert parsed == ParsedCommand("send", "ON", "  /Send   ON  ")


def test_name_is_lowercased() -> None:
    parsed = parse_command("/SEND ON")
    assert parsed is not None
    assert (parsed.name, parsed.args) == ("send", "ON")


@pytest.mark.parametrize(
    ("text", "args"),
    [("/send:", ""), ("/send: on", "on"), ("/send:on", "on"), ("/send : off", "off")],
)
def test_colon_after_name_becomes_a_space(text: str, args: str) -> None:
    assert parse_command(text) == ParsedCommand("send", args, text)


def test_only_first_line_counts_when_text_starts_with_slash() -> None:
    parsed = parse_command("/send off\nand then tell me a joke")
    assert parsed is not None
    assert (parsed.name, parsed.args) == ("send", "off")


def test_command_on_a_later_line_is_not_a_command() -> None:
    assert parse_command("hello\n/send off") is None


def test_bot_suffix_matching_username_is_dropped_case_insensitively() -> None:
    parsed = parse_command("/send@MyBot off", bot_username="mybot")
    assert parsed is not None
    assert (parsed.name, parsed.args) == ("send", "off")
    parsed = parse_command("/send@mybot: on", bot_username="@MyBot")
    assert parsed is not None
    assert (parsed.name, parsed.args) == ("send", "on")


def test_bot_suffix_for_another_bot_is_not_ours() -> None:
    assert parse_command("/send@OtherBot off", bot_username="MyBot") is None


def test_any_bot_suffix_is_dropped_without_a_username() -> None:
    parsed = parse_command("/send@SomeBot off")
    assert parsed is not None
    assert (parsed.name, parsed.args) == ("send", "off")


@pytest.mark.parametrize("text", ["/", "/1abc", "/-x", "/send.on", "/usr/bin/ls", "/sendé on"])
def test_malformed_command_names_are_not_commands(text: str) -> None:
    assert parse_command(text) is None


def test_name_allows_digits_dash_and_underscore() -> None:
    parsed = parse_command("/Re-set_2 now")
    assert parsed is not None
    assert (parsed.name, parsed.args) == ("re-set_2", "now")


@pytest.mark.parametrize(
    ("text", "patterns"),
    [
        ("@mybot /send off", ["@mybot"]),
        ("@MyBot /send off", ["@mybot"]),
        ("<@U123> /send off", ["<@U123>"]),
        ("<@123>  /send off", ["<@123>"]),
        ("@mybot: /send off", ["@mybot"]),
        ("/send @mybot off", ["@mybot"]),
    ],
)
def test_mentions_are_stripped_in_groups(text: str, patterns: list[str]) -> None:
    parsed = parse_command(text, is_group=True, mention_patterns=patterns)
    assert parsed is not None
    assert (parsed.name, parsed.args) == ("send", "off")


def test_bot_username_counts_as_a_mention_in_groups() -> None:
    parsed = parse_command("@MyBot /send off", is_group=True, bot_username="mybot")
    assert parsed is not None
    assert parsed.args == "off"


def test_mentions_are_not_stripped_outside_groups() -> None:
    assert parse_command("@mybot /send off", mention_patterns=["@mybot"]) is None


def test_mention_pattern_does_not_strip_a_longer_handle() -> None:
    assert parse_command("@mybots /send off", is_group=True, mention_patterns=["@mybot"]) is None
    parsed = parse_command("/send @mybots off", is_group=True, mention_patterns=["@mybot"])
    assert parsed is not None
    assert parsed.args == "@mybots off"
    assert not is_send_command(parsed)


def test_mention_then_multiline_text() -> None:
    parsed = parse_command("<@123>\n/send on\nplease", is_group=True, mention_patterns=["<@123>"])
    assert parsed is not None
    assert (parsed.name, parsed.args) == ("send", "on")


# --- /send modes (cases 133–140) -----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "mode"),
    [
        ("/send on", "allow"),
        ("/send allow", "allow"),
        ("/send off", "deny"),
        ("/send deny", "deny"),
        ("/send inherit", "inherit"),
        ("/send default", "inherit"),
        ("/send reset", "inherit"),
        ("/SEND ON", "allow"),
        ("/send: on", "allow"),
        ("/Send Off", "deny"),
        ("/send@MyBot off", "deny"),
        ("/send", None),
        ("/send:", None),
        ("/send maybe", "invalid"),
        ("/send on please", "agent"),
        ("/send 1", "agent"),
        ("/send on!", "agent"),
        ("send on", "agent"),
        ("/sendon", "agent"),
        ("/status", "agent"),
    ],
)
def test_router_view_of_send(text: str, mode: object) -> None:
    assert send_mode(text) == mode


@pytest.mark.parametrize(
    ("args", "mode"),
    [
        ("", None),
        ("   ", None),
        ("ON", "allow"),
        (" off ", "deny"),
        ("Reset", "inherit"),
        ("maybe", "invalid"),
        ("on please", "invalid"),
    ],
)
def test_parse_send_mode(args: str, mode: object) -> None:
    assert parse_send_mode(args) == mode


def test_is_send_command_needs_send_and_at_most_one_alphabetic_token() -> None:
    assert is_send_command(ParsedCommand("send", "", "/send"))
    assert is_send_command(ParsedCommand("send", "maybe", "/send maybe"))
    assert not is_send_command(ParsedCommand("send", "on please", "/send on please"))
    assert not is_send_command(ParsedCommand("stop", "", "/stop"))
    assert not is_send_command(None)


# --- reply texts ---------------------------------------------------------------------------


def test_reply_texts() -> None:
    assert SEND_USAGE == "⚙️ Usage: /send on|off|inherit"
    assert SEND_OWNER_ONLY == "⚙️ /send is owner-only."
    assert send_set_text("allow") == "⚙️ Send policy set to on."
    assert send_set_text("deny") == "⚙️ Send policy set to off."
    assert send_set_text("inherit") == "⚙️ Send policy set to inherit."
