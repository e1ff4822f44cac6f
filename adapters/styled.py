"""Markdown → chat text for platforms whose formatting is a handful of styles (D161).

WhatsApp marks styles inline (``*bold*``, ``_italic_``, ``~strike~``, `` `code` ``,
```` ```mono``` ````); Signal sends plain text plus style ranges (``start:length:BOLD`` in UTF-16
units). Both are the same walk over the markdown the agent wrote, so it is written once: headings
become bold lines, links ``text (url)`` (neither platform has link markup, and a bare URL is
linked by the apps), lists and quotes keep their plain-text shape, tables become monospaced
blocks (``core.model.markdown``), and raw HTML stays visible text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from markdown_it.token import Token

from core.api.rendering import parser, tables_to_code

Style = Literal["BOLD", "ITALIC", "STRIKETHROUGH", "MONOSPACE"]

#: WhatsApp's marks; inline code and blocks use one and three backticks.
WHATSAPP_MARKS: dict[Style, str] = {
    "BOLD": "*",
    "ITALIC": "_",
    "STRIKETHROUGH": "~",
    "MONOSPACE": "`",
}
_INLINE: dict[str, Style] = {"strong": "BOLD", "em": "ITALIC", "s": "STRIKETHROUGH"}


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


@dataclass(slots=True)
class StyledText:
    """Plain text and its style ranges ``(start, length, style)`` in UTF-16 code units."""

    text: str
    styles: list[tuple[int, int, Style]] = field(default_factory=list)


class _Writer:
    """Appends text; a style is either a mark written around it or a recorded range."""

    def __init__(self, marks: dict[Style, str] | None) -> None:
        self.marks = marks
        self.parts: list[str] = []
        self.pos = 0
        self.styles: list[tuple[int, int, Style]] = []
        self._open: list[tuple[Style, int]] = []

    def write(self, text: str) -> None:
        if text:
            self.parts.append(text)
            self.pos += utf16_len(text)

    def open(self, style: Style, mark: str | None = None) -> None:
        if self.marks is not None:
            self.write(mark or self.marks[style])
        else:
            self._open.append((style, self.pos))

    def close(self, style: Style, mark: str | None = None) -> None:
        if self.marks is not None:
            self.write(mark or self.marks[style])
            return
        for i in range(len(self._open) - 1, -1, -1):
            if self._open[i][0] == style:
                start = self._open.pop(i)[1]
                if self.pos > start:
                    self.styles.append((start, self.pos - start, style))
                return

    def styled(self, style: Style, text: str, mark: str | None = None) -> None:
        self.open(style, mark)
        self.write(text)
        self.close(style, mark)

    def result(self) -> StyledText:
        text = "".join(self.parts)
        stripped = text.rstrip()
        end = utf16_len(stripped)
        styles = [(s, min(n, end - s), st) for s, n, st in self.styles if s < end]
        return StyledText(stripped, sorted(styles))


class _Walk:
    def __init__(self, writer: _Writer) -> None:
        self.w = writer
        self.quote = 0
        self.lists: list[list[int | None]] = []  # [next number or None for bullets]
        self.blocks = 0
        self.item_marker: str | None = None
        self.new_list = False  # the next block opens a list: a blank line before it

    def newline(self) -> None:
        self.w.write("\n" + "> " * self.quote)

    def start_block(self, tight: bool) -> None:
        if self.blocks:
            self.w.write("\n" if tight and self.lists and not self.new_list else "\n\n")
            self.w.write("> " * self.quote)
        elif self.quote:
            self.w.write("> " * self.quote)
        self.blocks += 1
        self.new_list = False
        if self.item_marker is not None:
            self.w.write(self.item_marker)
            self.item_marker = None

    def run(self, tokens: list[Token]) -> None:
        heading = False
        for tok in tokens:
            kind = tok.type
            if kind == "heading_open":
                heading = True
            elif kind == "heading_close":
                heading = False
            elif kind == "paragraph_open" and not tok.hidden:
                self.start_block(False)
            elif kind == "paragraph_open":
                self.start_block(True)
            elif kind == "inline":
                if heading:
                    self.start_block(False)
                    self.w.open("BOLD")
                    self.inline(tok.children or [])
                    self.w.close("BOLD")
                else:
                    self.inline(tok.children or [])
            elif kind in ("fence", "code_block"):
                self.start_block(False)
                body = tok.content.rstrip("\n")
                if self.quote:
                    body = body.replace("\n", "\n" + "> " * self.quote)
                self.w.styled("MONOSPACE", body, "```")
            elif kind == "html_block":
                self.start_block(False)
                self.w.write(tok.content.rstrip("\n"))
            elif kind == "hr":
                self.start_block(False)
                self.w.write("———")
            elif kind == "blockquote_open":
                self.quote += 1
            elif kind == "blockquote_close":
                self.quote -= 1
            elif kind == "bullet_list_open":
                self.lists.append([None])
                self.new_list = len(self.lists) == 1
            elif kind == "ordered_list_open":
                self.lists.append([int(tok.attrs.get("start", 1) or 1)])
                self.new_list = len(self.lists) == 1
            elif kind in ("bullet_list_close", "ordered_list_close"):
                self.lists.pop()
            elif kind == "list_item_open":
                indent = "  " * (len(self.lists) - 1)
                counter = self.lists[-1]
                if counter[0] is None:
                    self.item_marker = f"{indent}- "
                else:
                    self.item_marker = f"{indent}{counter[0]}. "
                    counter[0] += 1

    def inline(self, children: list[Token]) -> None:
        href: list[tuple[str, int]] = []
        for child in children:
            kind = child.type
            if kind == "text" or kind == "html_inline":
                self.w.write(child.content)
            elif kind in ("softbreak", "hardbreak"):
                self.newline()
            elif kind == "code_inline":
                self.w.styled("MONOSPACE", child.content)
            elif kind.endswith("_open") and kind[:-5] in _INLINE:
                self.w.open(_INLINE[kind[:-5]])
            elif kind.endswith("_close") and kind[:-6] in _INLINE:
                self.w.close(_INLINE[kind[:-6]])
            elif kind == "link_open":
                href.append((str(child.attrs.get("href", "")), len(self.w.parts)))
            elif kind == "link_close" and href:
                url, first = href.pop()
                shown = "".join(self.w.parts[first:])
                if url and shown != url and f"mailto:{shown}" != url:
                    self.w.write(f" ({url})")
            elif kind == "image":
                alt = child.content or "image"
                self.w.write(f"{alt} ({child.attrs.get('src', '')})")


def _render(md: str, marks: dict[Style, str] | None) -> StyledText:
    writer = _Writer(marks)
    _Walk(writer).run(parser().parse(tables_to_code(md)))
    return writer.result()


def whatsapp_text(md: str) -> str:
    """WhatsApp's markdown subset for one markdown text."""
    return _render(md, WHATSAPP_MARKS).text


def styled_text(md: str) -> StyledText:
    """Plain text plus style ranges (Signal's text styles) for one markdown text."""
    return _render(md, None)
