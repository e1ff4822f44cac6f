"""Transcript search as values and pure rules (D66): what is indexed, how a query is read, and
what a hit shows (an excerpt with token-like secrets redacted).

A query is read here, never by the engine: it becomes lists of normalised words (lowercase, no
diacritics, letters and digits only), every phrase in double quotes one list, so no character a
user types can reach FTS5's or PostgreSQL's query syntax (`"`, `*`, `NEAR(`, `:`, `OR` are text).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.model.records import TranscriptMessage

MAX_QUERY = 256
"""Characters of a query after trimming (D66)."""
MAX_TERMS = 32
"""Words and phrases of a query kept (the rest add little and would only cost time)."""
EXCERPT = 240
"""Characters of an excerpt at most (D66)."""
INDEXED_ROLES = frozenset({"user", "assistant"})

_WORD = re.compile(r"[^\W_]+")
_PHRASE = re.compile(r'"([^"]*)"')


def _fold(ch: str) -> str:
    """One character without case and diacritics (`É` → `e`), as FTS5's `remove_diacritics`."""
    base = "".join(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c))
    return base.lower()


def normalise(text: str) -> str:
    """Case- and diacritics-free text (`Café` → `cafe`), what PostgreSQL's index holds."""
    return "".join(_fold(ch) for ch in text)


def words(text: str) -> list[str]:
    """The normalised words of a text: runs of letters and digits."""
    return _WORD.findall(normalise(text))


def searchable_text(message: TranscriptMessage) -> str | None:
    """The text a message is found by: user and assistant text parts (D66), and the transcript
    of a voice note or audio file that is not already the text (a captioned note's words, D152)."""
    if message.role not in INDEXED_ROLES:
        return None
    texts = [str(b.get("text") or "") for b in message.content if b.get("type") == "text"]
    for b in message.content:
        heard = str(b.get("transcript") or "").strip() if b.get("type") == "attachment" else ""
        if heard and all(heard != t.strip() for t in texts):
            texts.append(heard)
    text = "\n".join(texts).strip()
    return text or None


@dataclass(slots=True)
class SearchHit:
    """One message found, with the key of the session it belongs to."""

    session_key: str
    message: TranscriptMessage


class QueryError(ValueError):
    """A query that cannot be searched (blank or too long); its text is the tool's answer."""


@dataclass(frozen=True, slots=True)
class SearchQuery:
    """All terms must occur; a term of several words is a phrase (its words in order)."""

    terms: tuple[tuple[str, ...], ...]

    @classmethod
    def parse(cls, raw: str) -> SearchQuery:
        text = raw.strip()
        if not text:
            raise QueryError("query required")
        if len(text) > MAX_QUERY:
            raise QueryError(f"query too long: {len(text)} characters (at most {MAX_QUERY})")
        terms = [tuple(words(p)) for p in _PHRASE.findall(text)]
        terms.extend((w,) for w in words(_PHRASE.sub(" ", text)))
        unique = tuple(dict.fromkeys(t for t in terms if t))
        return cls(unique[:MAX_TERMS])

    @property
    def empty(self) -> bool:
        """No word at all (a query of punctuation only): nothing can match."""
        return not self.terms

    def fts5(self) -> str:
        """The FTS5 MATCH text: every term a double-quoted string, so the engine's syntax is
        never reached (our words hold letters and digits only)."""
        return " ".join('"' + " ".join(t) + '"' for t in self.terms)


# Token-like secrets: vendor key shapes, bearer tokens, JWTs, private keys, `key=value` pairs
# whose name says secret, and long random-looking runs of letters and digits.
_SECRETS = re.compile(
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)"
    r"|\b(?:sk|pk|rk)-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_\-]{16,}"
    r"|\bgh[pousr]_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}"
    r"|\bxox[abposr]-[A-Za-z0-9\-]{10,}|\bxapp-[A-Za-z0-9\-]{10,}"
    r"|\bAKIA[0-9A-Z]{16}\b|\bAIza[0-9A-Za-z_\-]{30,}"
    r"|\b\d{6,}:[A-Za-z0-9_\-]{30,}"
    r"|\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"
    r"|(?i:\bbearer\s+)[A-Za-z0-9._~+/\-]{12,}=*"
)
_NAMED = re.compile(
    r"(?i)\b((?:api[_-]?key|access[_-]?token|auth[_-]?token|token|secret|password|passwd|pwd)"
    r"\s*[:=]\s*)(\"[^\"]+\"|'[^']+'|\S+)"
)
_LONG = re.compile(r"[A-Za-z0-9+/_\-]{32,}={0,2}")
_UUID = re.compile(r"[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}")
REDACTED = "[redacted]"


def _random_looking(run: str) -> bool:
    if _UUID.fullmatch(run):
        return False
    digits = sum(c.isdigit() for c in run)
    letters = sum(c.isalpha() for c in run)
    mixed_case = any(c.isupper() for c in run) and any(c.islower() for c in run)
    return digits >= 4 and letters >= 4 and (mixed_case or digits >= 8)


def redact_secrets(text: str) -> str:
    """Replace token-like secrets by `[redacted]` (excerpts of search hits, D66)."""
    text = _SECRETS.sub(REDACTED, text)
    text = _NAMED.sub(lambda m: m.group(1) + REDACTED, text)
    return _LONG.sub(lambda m: REDACTED if _random_looking(m.group(0)) else m.group(0), text)


def _first_match(text: str, query: SearchQuery) -> int:
    """Where in `text` the first word of any term begins (0 when none is found)."""
    folded: list[str] = []
    origin: list[int] = []
    for i, ch in enumerate(text):
        f = _fold(ch)
        folded.append(f)
        origin.extend([i] * len(f))
    flat = "".join(folded)
    firsts = {t[0] for t in query.terms}
    for m in _WORD.finditer(flat):
        if m.group(0) in firsts:
            return origin[m.start()]
    return 0


def excerpt(text: str, query: SearchQuery, width: int = EXCERPT) -> str:
    """At most `width` characters around the first match, secrets redacted, `…` where cut."""
    clean = " ".join(redact_secrets(text).split())
    if len(clean) <= width:
        return clean
    at = _first_match(clean, query)
    start = max(0, min(at - width // 3, len(clean) - width))
    lead = "…" if start > 0 else ""
    end = start + width - len(lead)
    tail = "…" if end < len(clean) else ""
    if tail:
        end -= 1
    return f"{lead}{clean[start:end]}{tail}"


__all__ = [
    "EXCERPT",
    "MAX_QUERY",
    "REDACTED",
    "QueryError",
    "SearchHit",
    "SearchQuery",
    "excerpt",
    "normalise",
    "redact_secrets",
    "searchable_text",
    "words",
]
