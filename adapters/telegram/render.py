"""Markdown → Telegram text plus MessageEntity list, with telegramify-markdown.

Entities rather than ``parse_mode`` strings: the text goes out exactly as the user will read
it and the formatting travels beside it, so no character of model or user text can be taken
as markup. Raw HTML in the markdown is kept as literal text (telegramify drops it, which
would silently lose what the model wrote). Headings render as bold, tables as ``pre`` blocks
(via core.model.markdown), and chunks are measured in UTF-16 code units like Telegram does.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from telegramify_markdown import MessageEntity, RenderConfig, split_entities, utf16_len
from telegramify_markdown.converter import STANDARD_OPTIONS, EventWalker, _parse

from core.api.rendering import split_markdown, tables_to_code, utf16_units

TEXT_LIMIT = 4096


@dataclass(frozen=True, slots=True)
class TelegramText:
    """One message as Telegram will show it: plain text and its entities (UTF-16 offsets)."""

    text: str
    entities: tuple[dict[str, Any], ...] = ()


class _Walker(EventWalker):
    """telegramify's walker, except that raw HTML stays visible as text."""

    _HEADING_ENTITIES: dict[str, list[str]] = {}  # noqa: RUF012  # every heading: plain bold

    def _on_inline_html(self, html: str) -> None:
        if html.strip().lower() in ("<tg-spoiler>", "</tg-spoiler>"):  # from ||spoiler||
            super()._on_inline_html(html)
        else:
            self._on_text(html)

    def _handle_event(self, event: Any) -> None:
        payload = event[0] if isinstance(event, tuple) and len(event) == 2 else event
        if isinstance(payload, dict):
            if payload.get("Start") == "HtmlBlock":
                self._html_block: list[str] = []
                return
            if "Html" in payload:
                self._html_block.append(payload["Html"])
                return
            if payload.get("End") == "HtmlBlock":
                start = event[1].get("start") if isinstance(event, tuple) else None
                self._on_start_paragraph(start)
                self._on_text("".join(self._html_block).rstrip("\n"))
                self._on_end_paragraph()
                return
        super()._handle_event(event)


@lru_cache(maxsize=1)
def _config() -> Any:
    config = RenderConfig.isolated()
    sym = config.markdown_symbol
    for level in range(1, 7):
        setattr(sym, f"heading_level_{level}", "")
    sym.unordered_list_item = "•"
    config.cite_expandable = False
    return config


_LINK_SCHEMES = ("http://", "https://", "tg://", "mailto:")


def convert(md: str) -> tuple[str, list[MessageEntity]]:
    """(text, entities) for one piece of markdown; links other than http(s)/tg/mailto are
    shown as their text only (Telegram would refuse them, and they are no use in a chat)."""
    text, events = _parse(tables_to_code(md), STANDARD_OPTIONS, latex_escape=False)
    plain, entities, _ = _Walker(_config(), text).walk(events)
    kept = [
        e
        for e in entities
        if e.type != "text_link" or str(e.url or "").lower().startswith(_LINK_SCHEMES)
    ]
    return str(plain).rstrip(), kept


def render(md: str) -> TelegramText:
    text, entities = convert(md)
    return TelegramText(text, tuple(e.to_dict() for e in entities if e.length > 0))


def render_chunks(md: str, limit: int = TEXT_LIMIT) -> list[TelegramText]:
    """Split on the markdown source (format-aware), then render each chunk.

    The source is measured in UTF-16 units; rendered text is almost always shorter, and the
    rare chunk that grows past the limit (a padded table) is split again on its entities.
    """
    out: list[TelegramText] = []
    for chunk in split_markdown(md, limit, measure=utf16_units):
        text, entities = convert(chunk)
        if not text.strip():
            continue
        if utf16_len(text) <= limit:
            out.append(TelegramText(text, tuple(e.to_dict() for e in entities if e.length)))
            continue
        for part, ents in split_entities(text, entities, limit):
            out.append(TelegramText(part, tuple(e.to_dict() for e in ents if e.length)))
    return out


def preview(md: str, limit: int = TEXT_LIMIT) -> TelegramText:
    """What a streaming preview shows: the first chunk of the partial reply."""
    chunks = render_chunks(md, limit)
    return chunks[0] if chunks else TelegramText(md[:limit] or "…")
