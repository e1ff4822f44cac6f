"""Markdown → WhatsApp marks and Signal style ranges (D161): one walk, two outputs."""

from __future__ import annotations

import pytest

from adapters.styled import styled_text, utf16_len, whatsapp_text


def ranges(md: str) -> list[tuple[str, str]]:
    """(style, the text it covers) of each Signal range."""
    out = styled_text(md)
    units = out.text.encode("utf-16-le")
    return [(style, units[a * 2 : (a + n) * 2].decode("utf-16-le")) for a, n, style in out.styles]


@pytest.mark.parametrize(
    ("md", "shown"),
    [
        ("**bold** and *it* and ~~gone~~", "*bold* and _it_ and ~gone~"),
        ("***both***", "_*both*_"),
        ("# Title\n\nbody", "*Title*\n\nbody"),
        ("use `x = 1` here", "use `x = 1` here"),
        ("```py\nprint(1)\nprint(2)\n```", "```print(1)\nprint(2)```"),
        (
            "[docs](https://example.com/d) and <https://example.com/>",
            "docs (https://example.com/d) and https://example.com/",
        ),
        ("intro\n\n- a\n- b\n  1. c\n\nend", "intro\n\n- a\n- b\n  1. c\n\nend"),
        ("3. three\n4. four", "3. three\n4. four"),
        ("> quoted **b**\n> more", "> quoted *b*\n> more"),
        ("<b>raw</b> &amp; <!channel>", "<b>raw</b> & <!channel>"),
        ("| a | b |\n|---|---|\n| 1 | 2 |", "```a | b\n--+--\n1 | 2```"),
        ("line one\nline two", "line one\nline two"),
    ],
)
def test_whatsapp_marks(md: str, shown: str) -> None:
    assert whatsapp_text(md) == shown


def test_signal_ranges_count_utf16_units() -> None:
    out = styled_text("😀 **bold** then `code` and *it*")
    assert out.text == "😀 bold then code and it"
    assert out.styles == [(3, 4, "BOLD"), (13, 4, "MONOSPACE"), (22, 2, "ITALIC")]
    assert utf16_len("😀") == 2
    assert ranges("# Head\n\n~~x~~ and [y](https://e.org)") == [
        ("BOLD", "Head"),
        ("STRIKETHROUGH", "x"),
    ]
    assert styled_text("[y](https://e.org)").text == "y (https://e.org)"


def test_signal_ranges_nest_and_blocks_are_monospace() -> None:
    assert ranges("**bold *both* end**\n\n```\na\nb\n```") == [
        ("BOLD", "bold both end"),
        ("ITALIC", "both"),
        ("MONOSPACE", "a\nb"),
    ]
    assert styled_text("plain").styles == []
    assert styled_text("").text == ""
