"""Format-aware chunking and table rendering (core.model.markdown)."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.model.markdown import parser, split_markdown, tables_to_code, utf16_units


def _fences_balanced(chunk: str) -> bool:
    return len(re.findall(r"^```", chunk, re.M)) % 2 == 0


def test_short_text_is_one_chunk() -> None:
    assert split_markdown("hello **there**", 100) == ["hello **there**"]
    assert split_markdown("   \n ", 100) == []


def test_paragraphs_first() -> None:
    text = "first paragraph line one\nline two\n\nsecond paragraph here\n\nthird"
    chunks = split_markdown(text, 40)
    assert chunks[0] == "first paragraph line one\nline two"
    assert chunks[1] == "second paragraph here\n\nthird"


def test_then_lines_then_words() -> None:
    lines = "\n".join(f"line {i} with some words" for i in range(6))
    assert all(c.count("\n") < 6 and len(c) <= 50 for c in split_markdown(lines, 50))
    words = " ".join(f"w{i}" for i in range(60))
    chunks = split_markdown(words, 30)
    assert all(len(c) <= 30 for c in chunks)
    assert " ".join(chunks) == words  # cut only at spaces, nothing lost


def test_never_inside_an_inline_span() -> None:
    text = "aaaa bbbb **bold words that run on** and `code span here` end " * 3
    for limit in range(30, 80, 7):
        for chunk in split_markdown(text, limit):
            assert len(chunk) <= limit
            assert chunk.count("**") % 2 == 0 and chunk.count("`") % 2 == 0, chunk


def test_code_fence_closed_and_reopened_with_its_language() -> None:
    code = "\n".join(f"x{i} = {i}  # value" for i in range(40))
    text = f"Intro.\n\n```python\n{code}\n```\n\nAfter."
    chunks = split_markdown(text, 200)
    assert len(chunks) > 3
    for chunk in chunks:
        assert len(chunk) <= 200 and _fences_balanced(chunk), chunk
    assert all(c.startswith("```python\n") for c in chunks[1:-1])
    # joined back without the added fences, the code is all there in order
    body = "\n".join(re.sub(r"^```python\n|\n```$", "", c) for c in chunks[1:-1])
    assert all(
        f"x{i} = {i}" in body or f"x{i} = {i}" in chunks[0] or f"x{i} = {i}" in chunks[-1]
        for i in range(40)
    )
    rendered = [parser().parse(c) for c in chunks]
    assert all(any(t.type == "fence" for t in toks) for toks in rendered[1:-1])


def test_blank_line_inside_code_is_not_a_paragraph_break() -> None:
    text = "```\n" + "a = 1\n\nb = 2\n" * 20 + "```"
    for chunk in split_markdown(text, 60):
        assert _fences_balanced(chunk)


def test_telegram_limit_in_utf16_units() -> None:
    text = "😀 " * 3000  # every emoji is two UTF-16 code units
    chunks = split_markdown(text, 4096, measure=utf16_units)
    assert all(utf16_units(c) <= 4096 for c in chunks)
    assert max(len(c) for c in chunks) < 4096  # would overflow if counted in code points
    assert "".join(c.replace(" ", "") for c in chunks) == "😀" * 3000


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.sampled_from(
            [
                "word",
                "**bold**",
                "`code`",
                "\n",
                "\n\n",
                "\n```py\nx = 1\n```\n",
                "😀",
                "- item",
                "> quote",
                "longerwordwithoutspaces" * 3,
            ]
        ),
        max_size=80,
    ),
    st.integers(min_value=24, max_value=300),
)
def test_chunks_fit_and_lose_nothing(parts: list[str], limit: int) -> None:
    text = " ".join(parts)
    chunks = split_markdown(text, limit, measure=utf16_units)
    assert all(utf16_units(c) <= limit for c in chunks)
    squash = re.compile(r"\n?```py\n|\n```|\s+")
    assert squash.sub("", "".join(chunks)) == squash.sub("", text)


def test_tables_become_aligned_code_blocks() -> None:
    md = "Scores:\n\n| name | n |\n|---|--:|\n| **Ada** | 10 |\n| `Bo` | 7 |\n\nend"
    out = tables_to_code(md)
    assert out == "Scores:\n\n```\nname | n\n-----+---\nAda  | 10\nBo   | 7\n```\n\nend"
