"""Markdown → HTML for the channels whose clients render HTML (Matrix, email; D172).

The agent writes CommonMark (with GFM tables and strikethrough). Raw HTML in a reply is
escaped, so it shows as the text it is and never becomes formatting or markup that a client
would act on; links are kept only for http(s) and mailto.
"""

from __future__ import annotations

from functools import lru_cache

from markdown_it import MarkdownIt

_SAFE_SCHEMES = ("http:", "https:", "mailto:")


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
    md.validateLink = _safe_link  # type: ignore[method-assign]
    return md


def _safe_link(url: str) -> bool:
    return url.strip().lower().startswith(_SAFE_SCHEMES)


def markdown_html(text: str) -> str:
    """The HTML of one markdown text (a fragment: no ``<html>``/``<body>``)."""
    html: str = _parser().render(text)
    return html.strip()
