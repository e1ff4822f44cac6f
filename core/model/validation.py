"""One wording for pydantic validation errors, wherever bad input arrives."""

from __future__ import annotations

from pydantic import ValidationError


def validation_message(exc: ValidationError) -> str:
    """`<dotted.path>: <reason>` of the first problem (the one a user should fix first)."""
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "body"
    return f"{where}: {str(first['msg']).removeprefix('Value error, ')}"
