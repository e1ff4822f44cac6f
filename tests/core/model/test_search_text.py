"""Reading a search query and showing a hit (D66): no engine syntax, excerpts, redaction."""

from __future__ import annotations

import pytest

from core.model.search import QueryError, SearchQuery, excerpt, redact_secrets, words


def test_queries_become_words_and_phrases_only() -> None:
    q = SearchQuery.parse('  Café "Launch  DATE" NEAR(x, y) a:b OR * "" ')
    assert q.terms == (
        ("launch", "date"),
        ("cafe",),
        ("near",),
        ("x",),
        ("y",),
        ("a",),
        ("b",),
        ("or",),
    )
    assert q.fts5() == '"launch date" "cafe" "near" "x" "y" "a" "b" "or"'
    assert SearchQuery.parse('" * : ^').empty
    assert words("Ünïcödé_snake-case 3.14") == ["unicode", "snake", "case", "3", "14"]
    with pytest.raises(QueryError, match=r"^query too long: 257 characters"):
        SearchQuery.parse("x" * 257)


@pytest.mark.parametrize(
    "secret",
    [
        "sk-proj-AbCdEf0123456789XyZ0123",
        "sk-ant-api03-abcdefghijklmnop1234",
        "ghp_abcdefghijklmnopqrstuvwxyz0123",
        "xoxb-1234567890-abcdefghij",
        "AKIAIOSFODNN7EXAMPLE",
        "123456789:AAHfiqksKZ8WmR2zSjiQ7_v4TMAKdiHm9T0",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N",
        "Zx81Kq02LmN7pQ93RsT4uV65wX1yZ2aB",
    ],
)
def test_token_like_secrets_are_redacted(secret: str) -> None:
    assert redact_secrets(f"key {secret} here") == "key [redacted] here"


def test_named_secrets_and_ordinary_text() -> None:
    assert redact_secrets("password: hunter2 and api_key=abc") == (
        "password: [redacted] and api_key=[redacted]"
    )
    plain = "session 0b4e7c1e-3c2a-4f7e-9a55-1f2e3d4c5b6a at internationalisation-committee"
    assert redact_secrets(plain) == plain


def test_excerpt_is_at_most_240_characters_around_the_first_match() -> None:
    q = SearchQuery.parse("needle")
    text = "a " * 300 + "NÉEDLE " + "b " * 300
    out = excerpt(text, q)
    assert len(out) == 240 and out[0] == out[-1] == "…" and "NÉEDLE" in out
    assert excerpt("short  text\n with needle", q) == "short text with needle"
    assert excerpt("x" * 500, q).startswith("xxx")  # no match found: the start
