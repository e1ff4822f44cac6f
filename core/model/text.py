"""Text entering Crosstalk, made storable once at the edge (decision D12).

A lone UTF-16 surrogate (``"\\ud800"`` from JSON) cannot be encoded as UTF-8, and NUL is refused
by PostgreSQL text and JSON columns: either one reaching the store or a transcript file used to
brick a session. Every edge (inbound platform messages, HTTP JSON bodies and keys, web-chat
frames, model output, tool arguments) passes its text through :func:`clean_text` /
:func:`clean_json`, which replace both with U+FFFD (valid surrogate pairs are joined first).
"""

from __future__ import annotations

import re
from typing import Any

REPLACEMENT = "\ufffd"
_BAD = re.compile("[\x00\ud800-\udfff]")


def clean_text(text: str) -> str:
    """`text` with NUL and unpaired surrogates replaced by U+FFFD (unchanged when clean)."""
    if _BAD.search(text) is None:
        return text
    joined = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return joined.replace("\x00", REPLACEMENT)


def clean_json(value: Any) -> Any:
    """Every string (keys included) of a decoded JSON value, cleaned; other values as they are."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_text(k) if isinstance(k, str) else k: clean_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean_json(v) for v in value]
    return value
