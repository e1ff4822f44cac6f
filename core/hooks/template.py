"""Hook message templates, rendered by Jinja2's sandbox: a template written by the operator
reads fields of an untrusted JSON body, so it may not reach attributes or call methods that
the sandbox forbids, and its output is plain text (no HTML escaping)."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from jinja2 import Template, TemplateError
from jinja2.sandbox import SandboxedEnvironment

_ENV = SandboxedEnvironment(autoescape=False, keep_trailing_newline=False)
MAX_OUTPUT = 16_000


@lru_cache(maxsize=256)
def compile_template(source: str) -> Template:
    try:
        return _ENV.from_string(source)
    except TemplateError as exc:
        raise ValueError(f"invalid messageTemplate: {exc}") from exc


def render_message(source: str | None, context: dict[str, Any]) -> str:
    """The turn's message; without a template, the JSON body itself. Raises ValueError."""
    if source is None:
        return json.dumps(context.get("body"), ensure_ascii=False)
    try:
        text = compile_template(source).render(**context)
    except TemplateError as exc:  # includes the sandbox's SecurityError
        raise ValueError(f"messageTemplate failed: {exc}") from exc
    return text[:MAX_OUTPUT]
