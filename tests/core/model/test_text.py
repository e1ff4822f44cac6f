"""core.model.text: the one D12 edge normalisation (lone surrogates and NUL → U+FFFD)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from core.model.text import clean_json, clean_text


def test_bad_characters_become_replacement_characters() -> None:
    assert clean_text("a\ud800b\x00c") == "a\ufffdb\ufffdc"
    assert clean_text("\udfff") == "\ufffd"
    assert clean_text("ok é 😀") == "ok é 😀"
    assert clean_text("\ud83d\ude00") == "😀"  # a valid pair, as Python keeps it, is joined
    assert clean_json({"k\x00": ["\ud800", 5, None, {"x": "\x00"}]}) == {
        "k\ufffd": ["\ufffd", 5, None, {"x": "\ufffd"}]
    }


@given(st.text(alphabet=st.characters(codec=None, blacklist_categories=())))
def test_cleaned_text_is_storable_and_cleaning_is_idempotent(text: str) -> None:
    out = clean_text(text)
    out.encode("utf-8")  # never raises
    assert "\x00" not in out
    assert clean_text(out) == out
