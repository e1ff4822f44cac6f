"""Hook message templates, rendered by Jinja2's sandbox: a template written by the operator
reads fields of an untrusted JSON body, so it may not reach attributes or call methods that
the sandbox forbids, and its output is plain text (no HTML escaping).

Jinja2 is imported by the first template compiled (D56): a gateway without hook templates
never pays for it."""

from __future__ import annotations

import json
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jinja2 import Template
    from jinja2.sandbox import SandboxedEnvironment

MAX_OUTPUT = 16_000


@cache
def _env() -> SandboxedEnvironment:
    from jinja2.sandbox import SandboxedEnvironment

    return SandboxedEnvironment(autoescape=False, keep_trailing_newline=False)


@lru_cache(maxsize=256)
def compile_template(source: str) -> Template:
    from jinja2 import TemplateError

    try:
        return _env().from_string(source)
    except TemplateError as exc:
        raise ValueError(f"invalid messageTemplate: {exc}") from exc


def render_message(source: str | None, context: dict[str, Any]) -> str:
    """The turn's message; without a template, the JSON body itself. Raises ValueError."""
    if source is None:
        return json.dumps(context.get("body"), ensure_ascii=False)
    from jinja2 import TemplateError

    try:
        text = compile_template(source).render(**context)
    except TemplateError as exc:  # includes the sandbox's SecurityError
        raise ValueError(f"messageTemplate failed: {exc}") from exc
    return text[:MAX_OUTPUT]
