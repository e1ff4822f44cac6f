"""What a person sees in an HTML message (Matrix ``formatted_body``, an email's HTML part)."""

from __future__ import annotations

from html.parser import HTMLParser

Feature = tuple[str, ...]
_KINDS = {
    "strong": "bold",
    "b": "bold",
    "h1": "bold",
    "h2": "bold",
    "h3": "bold",
    "h4": "bold",
    "h5": "bold",
    "h6": "bold",
    "em": "italic",
    "i": "italic",
    "del": "strikethrough",
    "s": "strikethrough",
    "a": "link",
    "code": "code",
    "pre": "pre",
}


class _Features(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: set[Feature] = set()
        self._open: list[tuple[str, dict[str, str | None], list[str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _KINDS:
            self._open.append((tag, dict(attrs), []))

    def handle_data(self, data: str) -> None:
        for _, _, texts in self._open:
            texts.append(data)

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self._open) - 1, -1, -1):
            name, attrs, texts = self._open[i]
            if name != tag:
                continue
            del self._open[i]
            text = "".join(texts)
            kind = _KINDS[tag]
            inside_pre = any(n == "pre" for n, _, _ in self._open)
            if kind == "link":
                self.found.add(("link", text, str(attrs.get("href") or "")))
            elif kind == "code" and inside_pre:
                lang = str(attrs.get("class") or "").removeprefix("language-")
                self.found.add(("pre", text.strip(), lang) if lang else ("pre", text.strip()))
            elif kind == "pre":
                pass  # reported through its <code>
            else:
                self.found.add((kind, text.strip() if kind == "bold" else text))
            return


def html_features(html: str) -> set[Feature]:
    parser = _Features()
    parser.feed(html)
    parser.close()
    return parser.found
