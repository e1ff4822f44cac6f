"""Text rendering helpers for channel packages: format-aware chunking and markdown tables.

A channel's ``chunks()`` splits a reply into pieces its ``send_text`` can send; these are the
shared parts (core/model/markdown.py, core/model/chunking.py) every renderer builds on.
"""

from __future__ import annotations

from core.model.chunking import split_text
from core.model.markdown import parser, split_markdown, tables_to_code, utf16_units

__all__ = ["parser", "split_markdown", "split_text", "tables_to_code", "utf16_units"]
