"""What a person sees in a markdown message shown by a renderer with HTML shown as text
(Discord, the web chat); `html_features` is the same for HTML messages."""

from __future__ import annotations

from tests.adapters.conformance.drivers import Feature


def markdown_features(md: str) -> set[Feature]:
    """What a markdown renderer with HTML shown as text (Discord, the web chat) displays."""
    from markdown_it import MarkdownIt

    out: set[Feature] = set()
    tokens = MarkdownIt("commonmark", {"html": False}).enable("strikethrough").parse(md)
    for n, tok in enumerate(tokens):
        if tok.type == "heading_open":  # shown big and bold
            out.add(("bold", tokens[n + 1].content.strip()))
        if tok.type == "fence":
            out.add(
                ("pre", tok.content.strip(), tok.info) if tok.info else ("pre", tok.content.strip())
            )
        for i, child in enumerate(tok.children or []):
            if child.type == "code_inline":
                out.add(("code", child.content))
            elif child.type in ("strong_open", "em_open", "s_open", "link_open"):
                kind = {
                    "strong_open": "bold",
                    "em_open": "italic",
                    "s_open": "strikethrough",
                    "link_open": "link",
                }[child.type]
                children = tok.children or []
                text = children[i + 1].content if i + 1 < len(children) else ""
                out.add(
                    (kind, text, str(child.attrs.get("href", "")))
                    if kind == "link"
                    else (kind, text)
                )
    return out
