"""Markdown → Discord message content.

Discord renders markdown itself (bold, italic, code, fenced code with a language, links,
lists, quotes) and shows HTML as literal text, so most of the reply goes out as written. Two
things it lacks: tables (sent as aligned monospaced code blocks) and headings beyond ``###``
(all headings are sent as bold lines, the same on every platform). Mass mentions are switched
off where the client is built, not here.
"""

from __future__ import annotations

from core.api.rendering import parser, split_markdown, tables_to_code

TEXT_LIMIT = 2000


def render(md: str) -> str:
    """Discord content for one markdown text."""
    md = tables_to_code(md)
    lines = md.split("\n")
    tokens = parser().parse(md)
    for i, tok in enumerate(tokens):
        if tok.type != "heading_open" or tok.level != 0 or not tok.map:
            continue
        start, end = tok.map
        title = tokens[i + 1].content.strip()
        lines[start] = f"**{title}**" if title else ""
        for j in range(start + 1, end):  # setext underline
            lines[j] = None  # type: ignore[call-overload]
    return "\n".join(line for line in lines if line is not None)


def render_chunks(md: str, limit: int = TEXT_LIMIT) -> list[str]:
    """Render, then split format-aware to Discord's 2000-character limit."""
    return split_markdown(render(md), limit)
