"""The platform-neutral half of rendering: the agent writes CommonMark, adapters render it.

Two steps are the same on every platform and live here: GFM tables become monospaced code
blocks (no chat platform renders tables), and long replies are split *on the markdown source*
at paragraph, then line, then word boundaries, never inside an inline span and never inside a
code fence without closing it and reopening it in the next chunk, so each chunk is valid
markdown on its own and renders the same as it would have in one piece.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.token import Token

_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")


@lru_cache(maxsize=1)
def parser() -> MarkdownIt:
    """CommonMark plus the GFM tables and strikethrough the models write."""
    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


# ---- tables ------------------------------------------------------------------------------


def _cell_text(inline: Token) -> str:
    parts: list[str] = []
    for child in inline.children or []:
        if child.type in ("text", "code_inline", "html_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
    return "".join(parts).strip()


def _width(text: str) -> int:
    """Display columns: East Asian wide characters take two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _table_block(rows: list[list[str]]) -> str:
    cols = max(len(r) for r in rows)
    rows = [r + [""] * (cols - len(r)) for r in rows]
    widths = [max(_width(r[i]) for r in rows) for i in range(cols)]

    def line(cells: list[str]) -> str:
        return " | ".join(
            c + " " * (w - _width(c)) for c, w in zip(cells, widths, strict=True)
        ).rstrip()

    out = [line(rows[0]), "-+-".join("-" * w for w in widths)]
    out += [line(r) for r in rows[1:]]
    body = "\n".join(out)
    fence = "```"
    while fence in body:
        fence += "`"
    return f"{fence}\n{body}\n{fence}"


def tables_to_code(md: str) -> str:
    """Replace each top-level GFM table with an aligned monospaced code block."""
    tokens = parser().parse(md)
    tables: list[tuple[int, int, list[list[str]]]] = []
    rows: list[list[str]] = []
    start = end = 0
    for i, tok in enumerate(tokens):
        if tok.type == "table_open" and tok.level == 0 and tok.map:
            start, end, rows = tok.map[0], tok.map[1], []
        elif tok.type == "tr_open":
            rows.append([])
        elif (
            tok.type == "inline" and rows and i > 0 and tokens[i - 1].type in ("th_open", "td_open")
        ):
            rows[-1].append(_cell_text(tok))
        elif tok.type == "table_close" and tok.level == 0 and rows:
            tables.append((start, end, rows))
            rows = []
    if not tables:
        return md
    lines = md.split("\n")
    for start, end, table_rows in reversed(tables):
        lines[start:end] = _table_block(table_rows).split("\n")
    return "\n".join(lines)


# ---- splitting ---------------------------------------------------------------------------


@dataclass(slots=True)
class _Fence:
    marker: str  # "```" / "~~~~"
    line: str  # the opening to repeat: the marker and the language


def utf16_units(text: str) -> int:
    """Length in UTF-16 code units, as Telegram counts its 4096 limit."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def split_markdown(text: str, limit: int, *, measure: Callable[[str], int] = len) -> list[str]:
    """Chunks of at most `limit` (by `measure`), each valid markdown on its own.

    Cuts at the last paragraph break in the window, else the last line break, else the last
    space outside an inline span (code, emphasis, link), else hard. A cut inside a fenced
    code block closes the fence at the end of the chunk and reopens it (same info string) at
    the start of the next. Only whitespace at a cut is dropped.
    """
    if limit <= 0:
        raise ValueError("limit must be positive")
    if measure(text) <= limit:
        return [text] if text.strip() else []
    markers = [m.group(1) for m in map(_FENCE_OPEN.match, text.split("\n")) if m]
    reserve = 1 + max((len(m) for m in markers), default=0) if markers else 0
    chunks: list[str] = []
    rest, reopen = text, ""
    while rest:
        if reopen and limit - measure(reopen) - reserve < max(8, limit // 4):
            reopen = ""  # a limit this small has no room to reopen the fence
        if measure(reopen + rest) <= limit:
            if rest.strip():
                chunks.append(reopen + rest)
            break
        window = _fit(rest, max(limit - measure(reopen) - reserve, 1), measure)
        cut = _choose_cut(reopen, rest, window)
        fence = _open_fence(reopen + rest[:cut])
        if fence is not None:  # cut right after a fence opened: move the opener along
            line_start = rest.rfind("\n", 0, cut) + 1
            if (
                line_start > 0
                and _FENCE_OPEN.match(rest[line_start:cut])
                and _open_fence(reopen + rest[:line_start]) is None
            ):
                cut, fence = line_start - 1, None
        head = rest[:cut] if fence is not None else rest[:cut].rstrip()
        if head.strip():
            chunks.append(reopen + head + ("\n" + fence.marker if fence is not None else ""))
        rest = rest[cut:]
        if fence is not None:
            rest = rest[1:] if rest[:1] in ("\n", " ") else rest
            first, _, after = rest.partition("\n")
            if _closes(first, fence):  # the fence's own end is next: it ends this chunk
                rest, fence = after, None
        else:
            rest = rest.lstrip(" ").lstrip("\n")  # keeps the next line's indentation
        reopen = fence.line + "\n" if fence is not None else ""
    return chunks


def _fit(rest: str, budget: int, measure: Callable[[str], int]) -> int:
    """The longest prefix length of `rest` within `budget` (at least one character)."""
    if measure(rest) <= budget:
        return len(rest)
    lo, hi = 1, min(len(rest), max(budget, 1))
    while lo < hi:  # measure is monotone in the prefix length
        mid = (lo + hi + 1) // 2
        if measure(rest[:mid]) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _choose_cut(prefix: str, rest: str, window: int) -> int:
    area = rest[: window + 1]  # a separator right after the window still counts
    floor = window // 3  # don't settle for a tiny chunk when a lesser boundary is further on
    para = _last_paragraph_break(prefix, area)
    if para is not None and para > floor:
        return para
    line = area.rfind("\n")
    if line > 0:
        return line
    word = _last_safe_space(area)
    if word is not None:
        return word
    return max(window, 1)


def _last_paragraph_break(prefix: str, area: str) -> int | None:
    at = len(area)
    while True:
        at = area.rfind("\n\n", 0, at)
        if at <= 0:
            return None
        if _open_fence(prefix + area[:at]) is None:  # a blank line in code is not a paragraph
            return at
        at -= 1


_SPANS = ("`", "**", "__", "~~")


def _last_safe_space(area: str) -> int | None:
    """The last space not inside an inline code span, emphasis or link on its line."""
    at = len(area)
    while True:
        at = area.rfind(" ", 0, at)
        if at <= 0:
            return None
        line = area[area.rfind("\n", 0, at) + 1 : at]
        if _balanced(line):
            return at


def _balanced(line: str) -> bool:
    if line.count("`") % 2:
        return False
    if any(line.count(m) % 2 for m in _SPANS[1:]):
        return False
    return line.count("[") <= line.count("]") and line.count("](") <= line.count(")")


def _closes(line: str, fence: _Fence) -> bool:
    m = _FENCE_OPEN.match(line)
    return bool(
        m
        and m.group(1)[0] == fence.marker[0]
        and len(m.group(1)) >= len(fence.marker)
        and not m.group(2).strip()
    )


def _open_fence(text: str) -> _Fence | None:
    """The fence still open at the end of `text`, if any."""
    fence: _Fence | None = None
    for line in text.split("\n"):
        m = _FENCE_OPEN.match(line)
        if fence is None:
            if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
                info = (m.group(2).split() or [""])[0][:20]  # the language, not the whole line
                fence = _Fence(m.group(1), m.group(1) + info)
        elif _closes(line, fence):
            fence = None
    return fence
