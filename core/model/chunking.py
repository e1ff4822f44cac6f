"""Split outbound text to a platform's length limit at line or word boundaries."""

from __future__ import annotations


def split_text(text: str, limit: int) -> list[str]:
    """Chunks of at most `limit` characters, cut at the last newline, else the last space.

    A single word longer than the limit is cut hard; nothing is ever dropped except the
    whitespace at a cut.
    """
    if limit <= 0:
        raise ValueError("limit must be positive")
    if len(text) <= limit:
        return [text]
    chunks: list[str] = []
    rest = text
    while len(rest) > limit:
        window = rest[: limit + 1]
        cut = window.rfind("\n")
        if cut <= 0:
            cut = window.rfind(" ")
        if cut <= 0:
            cut = limit
        chunks.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip("\n ") if cut < len(rest) else ""
    if rest:
        chunks.append(rest)
    return [c for c in chunks if c]


def cut_reply(text: str, limit: int) -> str:
    """`text`, or its first `limit` characters (at a line or word boundary) and a note saying
    it was cut (D142): a 300 KB model reply is a few messages in a chat, never 75."""
    if len(text) <= limit:
        return text
    head = split_text(text, limit)[0]
    return f"{head}\n\n✂️ Reply cut: it was {len(text):,} characters; a chat gets {limit:,}."
