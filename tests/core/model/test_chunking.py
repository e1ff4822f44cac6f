from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from core.model.chunking import split_text


def test_short_text_is_one_chunk() -> None:
    assert split_text("hello", 10) == ["hello"]


def test_cuts_at_newline_then_space() -> None:
    assert split_text("aaaa\nbbbb cccc", 9) == ["aaaa", "bbbb cccc"]
    assert split_text("aaaa bbbb cccc", 9) == ["aaaa bbbb", "cccc"]


def test_hard_cut_for_long_words() -> None:
    assert split_text("x" * 25, 10) == ["x" * 10, "x" * 10, "x" * 5]


@given(st.text(alphabet=st.sampled_from("ab \n"), max_size=300), st.integers(1, 40))
def test_chunks_fit_and_keep_every_word(text: str, limit: int) -> None:
    chunks = split_text(text, limit)
    assert all(len(c) <= limit for c in chunks)
    assert "".join(text.split()) == "".join("".join(chunks).split())
